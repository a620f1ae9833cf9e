// Resolved profile entries kept in memory: answered without a statement while the database's
// profile counter stands still, read again as soon as any change to a workspace, profile, entry
// or secret (through any coordinator, or none) moves it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { RunStatus } from '@trellis/core';
import { admitQueuedRuns, insertRun, profilesVersion, type Db } from '@trellis/store';
import { createSilentLogger, openSecretKeyring, ProfileService } from '@trellis/coordinator';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';

const KEY = randomBytes(32).toString('base64');
let t: TestCoordinator;
let profiles: ProfileService;

async function ok(method: string, path: string, body?: unknown): Promise<void> {
  const res = await t.call(method, path, body);
  assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${JSON.stringify(res.json)}`);
}

let statements = 0;

/** The coordinator's database, counting the statements sent through it. */
function counting(db: Db): Db {
  return {
    capabilities: db.capabilities,
    query: async <T,>(sql: string, params?: unknown[]): Promise<T[]> => {
      statements += 1;
      return db.query<T>(sql, params);
    },
    transaction: (fn) => db.transaction(fn),
    exec: (sql) => db.exec(sql),
    close: () => db.close(),
  };
}

/** Statements sent while `fn` ran. */
async function counted<T>(fn: () => Promise<T>): Promise<{ result: T; statements: number }> {
  const before = statements;
  const result = await fn();
  return { result, statements: statements - before };
}

const version = () => profilesVersion(t.coordinator.db);
const INPUT = { workspaceName: 'team', profileName: 'prod' };
const values = async (asOf?: number) => Object.fromEntries((await profiles.resolve(INPUT, undefined, asOf)).entries.map((e) => [e.key, e.value]));

before(async () => {
  t = await startTestCoordinator(
    'profiles_cache',
    // `held` waits for a worker that never comes: its entries stay those recorded when it was queued.
    { cached: 'steps:\n  - name: s\n    command: "true"\n', held: 'worker_selector:\n  pool: none\nsteps:\n  - name: s\n    command: "true"\n' },
    { secretsKey: KEY },
  );
  // A service of its own: as another coordinator on the same database would hold it.
  profiles = new ProfileService(counting(t.coordinator.db), openSecretKeyring({ current: KEY, previous: [] }, t.coordinator.db.capabilities, t.dir, createSilentLogger()));
  await ok('POST', '/workspaces', { name: 'team' });
  await ok('PUT', '/profiles/_global/variables/G', { value: 'g1' });
  await ok('PUT', '/profiles/_workspaces/team/variables/W', { value: 'w1' });
  await ok('POST', '/profiles', { name: 'prod' });
  await ok('PUT', '/profiles/prod/variables/P', { value: 'p1' });
  await ok('PUT', '/profiles/prod/secrets/S', { value: 's1' });
});
after(async () => t.stop());

describe('resolved profile entries kept in memory', () => {
  test('at an unchanged counter value the entries answer without a statement; a change made elsewhere is read at the next value', async () => {
    const v1 = await version();
    const first = await counted(() => values(v1));
    assert.deepEqual(first.result, { G: 'g1', P: 'p1', S: 's1', W: 'w1' });
    assert.ok(first.statements > 0, 'the first resolve reads the layers');
    const again = await counted(() => values(v1));
    assert.deepEqual(again.result, { G: 'g1', P: 'p1', S: 's1', W: 'w1' });
    assert.equal(again.statements, 0, 'kept entries answer at the same counter value');
    // Another coordinator's write: this service hears nothing of it but the counter.
    await ok('PUT', '/profiles/prod/variables/P', { value: 'p2' });
    const v2 = await version();
    assert.ok(v2 > v1, `the counter moved: ${v1} -> ${v2}`);
    const later = await counted(() => values(v2));
    assert.deepEqual(later.result, { G: 'g1', P: 'p2', S: 's1', W: 'w1' });
    assert.ok(later.statements > 0);
  });

  test('without a counter value (a run being queued) the counter is read first, so every change is seen at once', async () => {
    await values();
    await t.coordinator.db.query(`UPDATE profile_entries SET value = 'g3' WHERE key = 'G'`);
    assert.equal((await values()).G, 'g3');
    await ok('PATCH', '/profiles/prod', { status: 'disabled' });
    await assert.rejects(profiles.resolve(INPUT), /disabled/);
    await ok('PATCH', '/profiles/prod', { status: 'active' });
    assert.equal((await values()).P, 'p2');
  });

  test('reads inside a caller\'s transaction are not kept: they may hold its uncommitted writes', async () => {
    const v = await version();
    await values(v);
    await assert.rejects(
      t.coordinator.db.transaction(async (tx) => {
        await tx.query(`UPDATE profile_entries SET value = 'uncommitted' WHERE key = 'G'`);
        assert.equal(Object.fromEntries((await profiles.resolve(INPUT, tx)).entries.map((e) => [e.key, e.value])).G, 'uncommitted');
        throw new Error('roll back');
      }),
      /roll back/,
    );
    assert.equal(await version(), v, 'the rollback left the counter where it was');
    assert.equal((await values(v)).G, 'g3');
  });

  test('every statement that changes a workspace, a profile, an entry or a secret moves the counter', async () => {
    const changes = [
      `UPDATE workspaces SET description = 'd' WHERE name = 'team'`,
      `UPDATE profiles SET description = 'd' WHERE name = 'prod'`,
      `UPDATE profile_entries SET value = value WHERE key = 'W'`,
      `UPDATE profile_secrets SET updated_at = now()`,
      `DELETE FROM profile_entries WHERE key = 'W'`,
      `DELETE FROM workspaces WHERE name = 'team'`,
    ];
    for (const change of changes) {
      const before = await version();
      await t.coordinator.db.query(change);
      assert.ok((await version()) > before, change);
    }
    assert.deepEqual(Object.keys(await values(await version())), ['G', 'P', 'S'], 'the deleted workspace layer is gone');
  });

  test('a start records the entries as of its read of the definition: one made by another coordinator just before is in them', async () => {
    const keysOf = async (dagRunId: string) => {
      const run = await t.waitForRunStatus('cached', dagRunId, [RunStatus.Success]);
      return (run.profileEntries as Array<{ key: string }>).map((e) => e.key);
    };
    assert.equal((await t.call('POST', '/dags/cached/start', { dagRunId: 'c1' })).status, 200);
    assert.deepEqual(await keysOf('c1'), ['G']);
    const globalId = (await t.coordinator.db.query<{ id: string }>(`SELECT id::text AS id FROM profiles WHERE scope = 'global'`))[0]!.id;
    await t.coordinator.db.query(`INSERT INTO profile_entries (profile_id, key, kind, value, updated_by) VALUES ($1, 'N', 'variable', 'n', 'elsewhere')`, [globalId]);
    assert.equal((await t.call('POST', '/dags/cached/start', { dagRunId: 'c2' })).status, 200);
    assert.deepEqual(await keysOf('c2'), ['G', 'N']);
    // What the queueing recorded, before any start could record it again.
    assert.equal((await t.call('POST', '/dags/held/start', { dagRunId: 'h1' })).status, 200);
    await t.coordinator.db.query(`INSERT INTO profile_entries (profile_id, key, kind, value, updated_by) VALUES ($1, 'M', 'variable', 'm', 'elsewhere')`, [globalId]);
    assert.equal((await t.call('POST', '/dags/held/start', { dagRunId: 'h2' })).status, 200);
    const queuedKeys = async (dagRunId: string) => {
      const { dagRun } = (await t.call('GET', `/dag-runs/held/${dagRunId}`)).json as { dagRun: { status: number; profileEntries: Array<{ key: string }> } };
      assert.equal(dagRun.status, RunStatus.Queued);
      return dagRun.profileEntries.map((e) => e.key);
    };
    assert.deepEqual(await queuedKeys('h1'), ['G', 'N']);
    assert.deepEqual(await queuedKeys('h2'), ['G', 'M', 'N']);
  });

  test('an admission reports the counter its statement saw', async () => {
    // For a worker: this coordinator's own executor would take a local run first.
    await insertRun(t.coordinator.db, {
      dagName: 'cache', dagRunId: 'r1', fileName: 'cache', attemptId: 'a1', status: RunStatus.Queued, params: '[]', queueName: 'cache-q', dispatchTarget: 'remote',
      logFile: '/logs/cache/r1/run.log', specYaml: 'steps: [true]', labels: [], trigger: 'manual', triggeredBy: { kind: 'anonymous', id: 'anonymous', name: 'anonymous' }, noReuse: false,
    });
    const admitted = await admitQueuedRuns(t.coordinator.db, { limits: new Map(), defaultLimit: 1, workerId: 'cache-worker', target: { kind: 'remote', labels: {} }, batch: 4 });
    assert.deepEqual(admitted.runs.map((r) => r.dagRunId), ['r1']);
    assert.equal(admitted.profilesVersion, await version());
    assert.ok(!('profilesVersion' in admitted.runs[0]!), 'the runs are plain run records');
  });
});
