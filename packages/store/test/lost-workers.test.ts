import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RunStatus } from '@trellis/core';
import { admitQueuedRuns, ackRun, failRunsOfLostWorkers, getRun, insertRun, recordHeartbeat, upsertWorker, type Db } from '@trellis/store';
import { openTestDb } from '@trellis/store/testing';

let db: Db;
let cleanup: () => Promise<void>;

before(async () => {
  ({ db, cleanup } = await openTestDb('lost_workers'));
});
after(async () => cleanup());

async function startedOn(workerId: string, dagRunId: string, remote: boolean) {
  await insertRun(db, {
    dagName: 'd', dagRunId, fileName: 'd', attemptId: `a-${dagRunId}`, status: RunStatus.Queued, params: '[]', queueName: dagRunId,
    logFile: '', specYaml: 'steps: [true]', labels: [], trigger: 'manual', noReuse: false, dispatchTarget: remote ? 'remote' : 'local',
  });
  const target = remote ? { kind: 'remote' as const, labels: {} } : { kind: 'local' as const };
  await db.transaction((tx) => admitQueuedRuns(tx, { limits: new Map(), defaultLimit: 1, workerId, target, batch: 10 }));
  if (remote) assert.ok(await ackRun(db, workerId, { dagName: 'd', dagRunId, attemptId: `a-${dagRunId}` }));
}

describe('lost workers and coordinators', () => {
  test('runs of a silent worker or a dead coordinator fail with an error naming it; live ones are untouched', async () => {
    for (const id of ['w-dead', 'w-live', 'local:ghost', 'local:alive']) await upsertWorker(db, { id, labels: {}, pollers: 1, hostname: 'h', version: 't' });
    await startedOn('w-dead', 'r1', true);
    await startedOn('w-live', 'r2', true);
    await startedOn('local:ghost', 'r3', false);
    await startedOn('local:alive', 'r4', false);
    await db.query("UPDATE workers SET last_heartbeat = now() - interval '1 minute' WHERE id IN ('w-dead', 'local:ghost')");
    await recordHeartbeat(db, 'w-live', [], 1, 1);
    const lost = await failRunsOfLostWorkers(db, 15);
    assert.deepEqual(lost.map((r) => r.dagRunId).sort(), ['r1', 'r3']);
    assert.match((await getRun(db, 'd', 'r1'))?.error ?? '', /^worker w-dead was lost: no heartbeat for more than 15 s/);
    assert.match((await getRun(db, 'd', 'r3'))?.error ?? '', /^coordinator ghost was lost/);
    assert.equal((await getRun(db, 'd', 'r2'))?.status, RunStatus.Running);
    assert.equal((await getRun(db, 'd', 'r4'))?.status, RunStatus.Running);
  });
});
