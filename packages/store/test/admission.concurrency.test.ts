import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RunStatus } from '@trellis/core';
import { admitQueuedRuns, insertRun, profilesVersion, queueCounts, type Admission, type Db } from '@trellis/store';
import { openTestDb } from '@trellis/store/testing';

let db: Db;
let other: Db;
let cleanup: () => Promise<void>;

before(async () => {
  const opened = await openTestDb('admission_concurrency');
  db = opened.db;
  cleanup = opened.cleanup;
  // On PostgreSQL a second pool is a second coordinator; PGlite has one session, so the same handle.
  other = opened.second !== undefined ? await opened.second() : db;
});
after(async () => cleanup());

async function enqueue(queueName: string, count: number, selector: Record<string, string> = {}, prefix = queueName): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    await insertRun(db, {
      dagName: prefix, dagRunId: `${prefix}-${i}`, fileName: prefix, attemptId: `a${i}`, status: RunStatus.Queued, params: '[]', queueName,
      logFile: '', specYaml: 'steps: [true]', labels: [], trigger: 'manual', triggeredBy: { kind: 'anonymous', id: 'anonymous', name: 'anonymous' }, noReuse: false, dispatchTarget: Object.keys(selector).length > 0 ? 'remote' : 'local', workerSelector: selector,
    });
  }
}

describe('admission under contention', () => {
  test('two coordinators admitting at once never exceed a queue limit nor admit a run twice', async () => {
    await enqueue('shared', 60);
    const admittedIds: number[] = [];
    const admitter = (handle: Db, workerId: string) => async () => {
      for (let round = 0; round < 15; round += 1) {
        const { runs } = await handle.transaction((tx) => admitQueuedRuns(tx, { limits: new Map([['shared', 5]]), defaultLimit: 1, workerId, target: { kind: 'local' }, batch: 4 }));
        admittedIds.push(...runs.map((r) => r.id));
        const running = (await queueCounts(db)).get('shared')?.running ?? 0;
        assert.ok(running <= 5, `running ${running} of 5`);
      }
    };
    await Promise.all([admitter(db, 'c1')(), admitter(other, 'c2')(), admitter(db, 'c3')()]);
    assert.equal(new Set(admittedIds).size, admittedIds.length, 'no run admitted twice');
    assert.equal(admittedIds.length, 5);
  });

  test('slots: an explicit limit, else unlimited for sub-run queues, else the default', async () => {
    // What the test before left queued would count as waiting.
    await db.query(`UPDATE runs SET status = ${RunStatus.Aborted} WHERE status = ${RunStatus.Queued}`);
    await enqueue('parent/sub', 3, {}, 'child');
    await enqueue('capped', 3);
    await enqueue('plain', 3);
    const { runs, moreQueued } = await admitQueuedRuns(db, { limits: new Map([['capped', 2]]), defaultLimit: 1, workerId: 'w', target: { kind: 'local' }, batch: 20 });
    const perQueue = new Map<string, number>();
    for (const run of runs) perQueue.set(run.queueName, (perQueue.get(run.queueName) ?? 0) + 1);
    assert.deepEqual(Object.fromEntries(perQueue), { 'parent/sub': 3, capped: 2, plain: 1 });
    assert.equal(moreQueued, true, 'runs held by full queues are still queued');
    const rest = await admitQueuedRuns(db, { limits: new Map([['capped', 9]]), defaultLimit: 9, workerId: 'w', target: { kind: 'local' }, batch: 20 });
    assert.deepEqual(rest.runs.map((r) => r.queueName).sort(), ['capped', 'plain', 'plain']);
    assert.equal(rest.moreQueued, false, 'the runs it admitted are not counted as still queued');
    const none = await admitQueuedRuns(db, { limits: new Map(), defaultLimit: 9, workerId: 'w', target: { kind: 'local' }, batch: 20 });
    assert.deepEqual([none.runs, none.moreQueued], [[], false], 'an admission of nothing answers no runs, not a row of nulls');
  });

  test('remote admission takes only runs whose selector the worker labels contain, and a full queue does not starve another', async () => {
    await enqueue('full', 3, { pool: 'a' });
    await enqueue('gpu-q', 2, { gpu: 'true' });
    await enqueue('open', 2, { pool: 'a' }, 'later');
    const target = { kind: 'remote' as const, labels: { pool: 'a', zone: 'eu' } };
    const admit = async () => (await db.transaction((tx) => admitQueuedRuns(tx, { limits: new Map(), defaultLimit: 1, workerId: 'w', target, batch: 10 }))).runs;
    const first = await admit();
    assert.deepEqual(first.map((r) => r.dagRunId).sort(), ['full-0', 'later-0']);
    assert.ok(first.every((r) => r.ackedAt === null && r.dispatchTarget === 'remote'));
    assert.deepEqual(await admit(), [], 'both queues are at their limit of one');
  });

  test('the profile counter an admission answers is read after its claim: a change committed while it waited for the queue is in it', async () => {
    await enqueue('race-q', 1, { pool: 'race' }, 'race');
    const before = await profilesVersion(db);
    let admission: Promise<Admission> | undefined;
    await other.transaction(async (tx) => {
      // Holds the queue as another admission would (on PGlite the transaction alone holds everything).
      await tx.query(`SELECT pg_advisory_xact_lock(hashtext('trellis.queue.race-q'))`);
      admission = db.transaction((t) => admitQueuedRuns(t, { limits: new Map(), defaultLimit: 1, workerId: 'w', target: { kind: 'remote', labels: { pool: 'race' } }, batch: 1 }));
      if (db.capabilities.advisoryLocks) await waitForAdvisoryWaiter();
      await tx.query(`INSERT INTO workspaces (id, name) VALUES (gen_random_uuid(), 'race')`);
    });
    const admitted = await admission;
    assert.deepEqual(admitted?.runs.map((r) => r.dagRunId), ['race-0']);
    assert.ok((admitted?.profilesVersion ?? 0) > before, `the counter moved past ${before} while the admission waited: ${admitted?.profilesVersion}`);
  });
});

/** Until a session waits for an advisory lock (the admission, its statement begun). */
async function waitForAdvisoryWaiter(): Promise<void> {
  for (let tries = 0; tries < 200; tries += 1) {
    const [row] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`);
    if ((row?.n ?? 0) > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('no admission waited for the queue lock');
}
