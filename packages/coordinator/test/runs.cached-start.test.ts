// A manual start takes the definition from the coordinator's index without reading the stored
// definitions' versions first: its insert checks them. A definition changed through a path this
// coordinator never heard of (another coordinator whose notification has not arrived) still
// starts as stored, as does a profile made or changed since the index last read the profile counter.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RunStatus } from '@trellis/core';
import { contentHash, type Db } from '@trellis/store';
import { openTestDb } from '@trellis/store/testing';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';

const DAG = 'cached';
const HELD = 'held';
let t: TestCoordinator;
let cleanupDb: () => Promise<void>;
const sent: string[] = [];

/** The coordinator's database, keeping the text of every statement sent through it. */
function recording(db: Db): Db {
  return {
    capabilities: db.capabilities,
    query: async <T,>(sql: string, params?: unknown[]): Promise<T[]> => {
      sent.push(sql);
      return db.query<T>(sql, params);
    },
    transaction: (fn) => db.transaction(fn),
    exec: (sql) => db.exec(sql),
    close: () => db.close(),
  };
}

/** The definitions' version read that an exact read of the index sends (storedVersions). */
const isVersionRead = (sql: string): boolean => sql.includes('FROM stored_file_versions WHERE kind = ANY');

async function start(dagRunId: string, body: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const res = await t.call('POST', `/dags/${DAG}/start`, { dagRunId, ...body });
  assert.equal(res.status, 200, JSON.stringify(res.json));
  return t.waitForRunStatus(DAG, dagRunId, [RunStatus.Success, RunStatus.Failed]);
}

async function stepNames(dagRunId: string): Promise<string[]> {
  const { json } = await t.call('GET', `/dag-runs/${DAG}/${dagRunId}`);
  return ((json.dagRun as { nodes: Array<{ step: { name: string } }> }).nodes ?? []).map((n) => n.step.name);
}

before(async () => {
  const opened = await openTestDb('runs_cached_start');
  cleanupDb = opened.cleanup;
  t = await startTestCoordinator(
    'runs_cached_start',
    { [DAG]: 'steps:\n  - name: first\n    command: "true"\n', [HELD]: 'worker_selector:\n  pool: none\nsteps:\n  - name: s\n    command: "true"\n' },
    {},
    { db: recording(opened.db) },
  );
});
after(async () => {
  await t.stop();
  await cleanupDb();
});

describe('manual starts from the index', () => {
  test('a start after the first one sends no read of the definitions versions', async () => {
    await start('warm');
    const before = sent.length;
    const run = await start('cached');
    assert.equal(run.status, RunStatus.Success);
    assert.deepEqual(sent.slice(before).filter(isVersionRead), [], 'the insert checks the versions instead');
  });

  test('a definition changed without this coordinator hearing of it starts as stored', async () => {
    // As another coordinator writes it, less the notification: the version moves, nothing is announced.
    const yaml = 'steps:\n  - name: changed\n    command: "true"\n';
    await t.coordinator.db.query(
      `WITH v AS (UPDATE stored_file_versions SET version = version + 1 WHERE kind = 'dag' RETURNING version)
       UPDATE stored_files SET content = $2, content_hash = $3, version = (SELECT version FROM v), updated_at = now(), origin = 'elsewhere'
       WHERE kind = 'dag' AND name = $1`,
      [DAG, Buffer.from(yaml), contentHash(yaml)],
    );
    const run = await start('after-change');
    assert.equal(run.status, RunStatus.Success);
    assert.deepEqual(await stepNames('after-change'), ['changed']);
    const again = sent.length;
    await start('after-change-2');
    assert.deepEqual(await stepNames('after-change-2'), ['changed']);
    assert.deepEqual(sent.slice(again).filter(isVersionRead), [], 'once caught up, starts are made from the index again');
  });

  test('a profile made after the index last read the profile counter can be started with', async () => {
    const created = await t.call('POST', '/profiles', { name: 'fresh' });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    const variable = await t.call('PUT', '/profiles/fresh/variables/WHERE', { value: 'fresh-profile' });
    assert.ok(variable.status < 300, JSON.stringify(variable.json));
    const run = await start('with-profile', { profileName: 'fresh' });
    assert.equal(run.status, RunStatus.Success);
    const { json } = await t.call('GET', `/dag-runs/${DAG}/with-profile`);
    const dagRun = json.dagRun as { profileName: string; profileEntries: Array<{ key: string }> };
    assert.equal(dagRun.profileName, 'fresh');
    assert.deepEqual(dagRun.profileEntries.map((e) => e.key), ['WHERE']);
  });

  test('a profile changed since its entries were last resolved is queued with the change', async () => {
    // `held` waits for a worker that never comes: its entries stay those recorded when it was queued.
    const queued = async (dagRunId: string): Promise<string[]> => {
      const res = await t.call('POST', `/dags/${HELD}/start`, { dagRunId, profileName: 'changing' });
      assert.equal(res.status, 200, JSON.stringify(res.json));
      const { json } = await t.call('GET', `/dag-runs/${HELD}/${dagRunId}`);
      const dagRun = json.dagRun as { status: number; profileEntries: Array<{ key: string }> };
      assert.equal(dagRun.status, RunStatus.Queued);
      return dagRun.profileEntries.map((e) => e.key).sort();
    };
    assert.equal((await t.call('POST', '/profiles', { name: 'changing' })).status, 201);
    assert.ok((await t.call('PUT', '/profiles/changing/variables/WHERE', { value: 'before' })).status < 300);
    // An exact read brings the index's profile counter up to date: the next start's entries are kept at it.
    assert.equal((await t.call('GET', `/dags/${HELD}`)).status, 200);
    assert.deepEqual(await queued('profile-before'), ['WHERE']);
    const added = await t.call('PUT', '/profiles/changing/variables/ADDED', { value: 'later' });
    assert.ok(added.status < 300, JSON.stringify(added.json));
    assert.deepEqual(await queued('profile-after'), ['ADDED', 'WHERE']);
  });
});
