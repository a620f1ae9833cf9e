// Two coordinators on one database (PGlite: one handle; PostgreSQL with TRELLIS_TEST_DATABASE_URL:
// two pools), each with its own DAGs directory: DAG definitions live in the database, each
// coordinator's index is a cache that follows it within a notification, and each directory is
// a mirror that imports what is edited by hand.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openTestDb } from '@trellis/store/testing';
import type { Db } from '@trellis/store';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';
import { captureLog } from './support/log-capture.js';

type Json = Record<string, unknown>;

/**
 * What a change may take to reach the other coordinator in a test. The 1 s bound is a
 * speed figure for a quiet machine; on a loaded CI machine a test allows more, so it checks that
 * the change arrives, not how fast.
 */
const PROPAGATION_MS = 5000;
/** A hand edit waits for the watch's debounce before it is imported. */
const IMPORT_MS = 10_000;

let a: TestCoordinator;
let b: TestCoordinator;
let dbA: Db;
let dbB: Db;
let cleanup: () => Promise<void>;
/** B's DAGs directory, outside B's own temporary folder so B can be restarted on it. */
let dagsB: string;
let root: string;

const spec = (word: string) => `steps:\n  - name: s\n    command: echo ${word}\n`;

/** Polls until `check` holds; fails with `what` after `ms`. Returns how long it took. */
async function within(ms: number, what: string, check: () => Promise<boolean> | boolean): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > ms) assert.fail(`${what} did not happen within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return Date.now() - started;
}

/** The file names a coordinator lists: the list reads its cache, so this shows what reached it. */
async function listed(t: TestCoordinator, name: string): Promise<Array<{ fileName: string; spec?: string }>> {
  const res = await t.call('GET', `/dags?perPage=1000&name=${encodeURIComponent(name)}`);
  return (res.json.dags as Json[]).map((d) => ({ fileName: d.fileName as string }));
}

async function specOf(t: TestCoordinator, fileName: string): Promise<string | undefined> {
  const res = await t.call('GET', `/dags/${fileName}/spec`);
  return res.status === 200 ? (res.json.spec as string) : undefined;
}

function startB(logger?: ReturnType<typeof captureLog>['logger']): Promise<TestCoordinator> {
  return startTestCoordinator('defs_b', {}, { dagsDir: dagsB }, { db: dbB, watch: true, ...(logger !== undefined ? { logger } : {}) });
}

before(async () => {
  const opened = await openTestDb('defs_shared');
  dbA = opened.db;
  dbB = opened.second !== undefined ? await opened.second() : opened.db;
  cleanup = opened.cleanup;
  root = mkdtempSync(join(tmpdir(), 'trellis-defs-'));
  dagsB = join(root, 'dags-b');
  mkdirSync(dagsB);
  a = await startTestCoordinator('defs_a', { seeded: spec('seeded') }, {}, { db: dbA, watch: true });
  b = await startB();
});

after(async () => {
  await b.stop();
  await a.stop();
  await cleanup();
  rmSync(root, { recursive: true, force: true });
});

describe('DAG definitions shared through the database', () => {
  test('a file in A\'s directory at start is stored, and B writes it into its own directory', async () => {
    assert.equal(await specOf(b, 'seeded'), spec('seeded'));
    await within(PROPAGATION_MS, 'seeded.yaml in B\'s directory', () => existsSync(join(dagsB, 'seeded.yaml')));
  });

  test('create, update, rename and delete on A reach B\'s list and B\'s directory within 1 s', async () => {
    assert.equal((await a.call('POST', '/dags', { name: 'shared', spec: spec('one') })).status, 201);
    await within(PROPAGATION_MS, 'B lists the created DAG', async () => (await listed(b, 'shared')).length === 1);
    await within(PROPAGATION_MS, 'B writes the created file', () => existsSync(join(dagsB, 'shared.yaml')) && readFileSync(join(dagsB, 'shared.yaml'), 'utf8') === spec('one'));

    assert.equal((await a.call('PUT', '/dags/shared/spec', { spec: spec('two') })).status, 200);
    await within(PROPAGATION_MS, 'B\'s cache has the update', () => b.coordinator.index.get('shared')?.text === spec('two'));
    await within(PROPAGATION_MS, 'B\'s file has the update', () => readFileSync(join(dagsB, 'shared.yaml'), 'utf8') === spec('two'));

    assert.equal((await a.call('POST', '/dags/shared/rename', { newFileName: 'moved' })).status, 200);
    await within(PROPAGATION_MS, 'B lists the renamed DAG only', async () => {
      const names = [...(await listed(b, 'shared')), ...(await listed(b, 'moved'))].map((d) => d.fileName);
      return names.length === 1 && names[0] === 'moved';
    });
    await within(PROPAGATION_MS, 'B\'s directory follows the rename', () => existsSync(join(dagsB, 'moved.yaml')) && !existsSync(join(dagsB, 'shared.yaml')));

    assert.equal((await a.call('DELETE', '/dags/moved')).status, 204);
    await within(PROPAGATION_MS, 'B no longer lists the deleted DAG', async () => (await listed(b, 'moved')).length === 0);
    await within(PROPAGATION_MS, 'B\'s file is removed', () => !existsSync(join(dagsB, 'moved.yaml')));
  });

  test('exact reads and starts on B never miss a change made on A a moment before', async () => {
    assert.equal((await a.call('POST', '/dags', { name: 'fresh', spec: spec('fresh') })).status, 201);
    assert.equal(await specOf(b, 'fresh'), spec('fresh'));
    const started = await b.call('POST', '/dags/fresh/start', {});
    assert.equal(started.status, 200, JSON.stringify(started.json));
    assert.equal((await a.call('DELETE', '/dags/fresh')).status, 204);
    assert.equal((await b.call('GET', '/dags/fresh')).status, 404);
    assert.equal((await b.call('PUT', '/dags/fresh/spec', { spec: spec('x') })).status, 404);
  });

  test('the contract\'s conflicts hold across coordinators: one winner of a simultaneous create, 409 and 404 on rename', async () => {
    for (let round = 0; round < 5; round += 1) {
      const name = `race${round}`;
      const statuses = (await Promise.all([a.call('POST', '/dags', { name, spec: spec('a') }), b.call('POST', '/dags', { name, spec: spec('b') })])).map((r) => r.status);
      assert.deepEqual(statuses.sort(), [201, 409], `round ${round}`);
    }
    assert.equal((await b.call('POST', '/dags/race0/rename', { newFileName: 'race1' })).status, 409);
    assert.equal((await b.call('POST', '/dags/nothing/rename', { newFileName: 'race9' })).status, 404);
    assert.equal((await b.call('DELETE', '/dags/nothing')).status, 404);
  });

  test('a file edited or added by hand in B\'s directory is imported and reaches A (one that does not parse too)', async () => {
    writeFileSync(join(dagsB, 'race0.yaml'), spec('edited by hand'));
    await within(IMPORT_MS, 'A sees the hand edit', () => a.coordinator.index.get('race0')?.text === spec('edited by hand'));
    writeFileSync(join(dagsB, 'handmade.yaml'), 'steps: 5\n');
    await within(IMPORT_MS, 'A lists the hand-made file with its errors', () => (a.coordinator.index.get('handmade')?.result.errors.length ?? 0) > 0);
    const listedA = (await a.call('GET', '/dags?name=handmade')).json.dags as Json[];
    assert.ok((listedA[0]?.errors as string[]).length > 0);
    rmSync(join(dagsB, 'handmade.yaml'));
    await within(IMPORT_MS, 'a file deleted by hand deletes the DAG', () => a.coordinator.index.get('handmade') === undefined);
  });

  test('restart: a change while B was down reaches its file; both sides changed: the newer wins with a warning naming the file', async () => {
    await b.stop();
    assert.equal((await a.call('PUT', '/dags/race1/spec', { spec: spec('changed while B was down') })).status, 200);
    assert.equal((await a.call('PUT', '/dags/race2/spec', { spec: spec('older change in the database') })).status, 200);
    // Later than the database's change: the hand edit wins.
    await new Promise((r) => setTimeout(r, 20));
    writeFileSync(join(dagsB, 'race2.yaml'), spec('newer change on disk'));
    const log = captureLog();
    b = await startB(log.logger);
    assert.equal(readFileSync(join(dagsB, 'race1.yaml'), 'utf8'), spec('changed while B was down'));
    assert.equal(await specOf(a, 'race2'), spec('newer change on disk'));
    const warnings = log.lines().filter((l) => l.level === 'warn' && String(l.message).includes('both on disk and in the database'));
    assert.deepEqual(warnings.map((w) => [w.name, w.winner]), [['race2', 'disk']], log.text());
  });

  test('B\'s directory deleted while B is down: a restart writes every definition back, nothing is lost', async () => {
    const before = (await a.call('GET', '/dags?perPage=1000')).json.dags as Json[];
    await b.stop();
    rmSync(dagsB, { recursive: true, force: true });
    b = await startB();
    const after = (await b.call('GET', '/dags?perPage=1000')).json.dags as Json[];
    assert.deepEqual(after.map((d) => d.fileName), before.map((d) => d.fileName));
    for (const dag of before) assert.ok(existsSync(join(dagsB, `${String(dag.fileName)}.yaml`)), `${String(dag.fileName)}.yaml written back`);
    assert.equal(readFileSync(join(dagsB, 'race2.yaml'), 'utf8'), spec('newer change on disk'));
  });

  test('a directory that agreed with one database, pointed at a new one, fills it: nothing on disk is deleted', async () => {
    await b.stop();
    const onDisk = readdirSync(dagsB).filter((f) => f.endsWith('.yaml')).sort();
    const fresh = await openTestDb('defs_fresh');
    try {
      const c = await startTestCoordinator('defs_c', {}, { dagsDir: dagsB, docsDir: '' }, { db: fresh.db });
      const listedC = ((await c.call('GET', '/dags?perPage=1000')).json.dags as Json[]).map((d) => `${String(d.fileName)}.yaml`);
      await c.stop();
      assert.deepEqual(listedC.sort(), onDisk);
      assert.deepEqual(readdirSync(dagsB).filter((f) => f.endsWith('.yaml')).sort(), onDisk);
    } finally {
      await fresh.cleanup();
      b = await startB();
    }
  });
});
