import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RunStatus } from '@trellis/core';
import { admitQueuedRuns, ackRun, advanceReportSeq, failRunsOfLostWorkers, getOutputs, getRun, insertRun, recordHeartbeat, saveAttemptOutputs, upsertWorker, type Db } from '@trellis/store';
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

  test("a failed attempt's later reports are fenced off: no sequence advance, no outputs; the live attempt's pass", async () => {
    const dead = await getRun(db, 'd', 'r1');
    const live = await getRun(db, 'd', 'r2');
    assert.ok(dead !== undefined && live !== undefined);
    assert.equal(await advanceReportSeq(db, dead.id, dead.attemptId, 9), false);
    assert.equal(await saveAttemptOutputs(db, dead.id, dead.attemptId, { status: 'succeeded' }, { late: 'yes' }), false);
    assert.equal(await getOutputs(db, dead.id), undefined);
    assert.equal(await advanceReportSeq(db, live.id, live.attemptId, 9), true);
    assert.equal(await saveAttemptOutputs(db, live.id, 'another-attempt', {}, { wrong: 'attempt' }), false);
    assert.equal(await saveAttemptOutputs(db, live.id, live.attemptId, { status: 'succeeded' }, { answer: '42' }), true);
    assert.deepEqual((await getOutputs(db, live.id))?.outputs, { answer: '42' });
  });
});
