import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RunStatus } from '@trellis/core';
import { admitQueuedRuns, ackRun, advanceReportSeq, failRunsOfLostWorkers, getNodes, getOutputs, getRun, insertRun, listWorkers, pruneWorkers, recordHeartbeat, saveAttemptOutputs, upsertWorker, writeSnapshot, type Db } from '@trellis/store';
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
    logFile: '', specYaml: 'steps: [true]', labels: [], trigger: 'manual', triggeredBy: { kind: 'anonymous', id: 'anonymous', name: 'anonymous' }, noReuse: false, dispatchTarget: remote ? 'remote' : 'local',
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
    // r1's step was running when its worker went silent; the worker had listed r1 as running.
    const r1 = await getRun(db, 'd', 'r1');
    assert.ok(r1);
    const step = (status: number) => ({ kind: 'step' as const, position: 0, stepName: 'work', data: { step: { name: 'work' }, status, startedAt: '2026-01-01T00:00:00.000Z', finishedAt: '', error: '' } });
    assert.ok(await writeSnapshot(db, { runId: r1.id, attemptId: r1.attemptId, expected: [RunStatus.Running], next: RunStatus.Running, nodes: [step(1)] }));
    await recordHeartbeat(db, 'w-dead', [{ dagName: 'd', dagRunId: 'r1', attemptId: r1.attemptId, rootDagRunName: 'd', rootDagRunId: 'r1', parentDagRunName: '', parentDagRunId: '', startedAt: '' }], 1, 1);
    await db.query("UPDATE workers SET last_heartbeat = now() - interval '1 minute' WHERE id IN ('w-dead', 'local:ghost')");
    await recordHeartbeat(db, 'w-live', [], 1, 1);
    const lost = await failRunsOfLostWorkers(db, 15);
    assert.deepEqual(lost.map((r) => r.dagRunId).sort(), ['r1', 'r3']);
    assert.match((await getRun(db, 'd', 'r1'))?.error ?? '', /^worker w-dead was lost: no heartbeat for more than 15 s/);
    assert.match((await getRun(db, 'd', 'r3'))?.error ?? '', /^coordinator ghost was lost/);
    assert.equal((await getRun(db, 'd', 'r2'))?.status, RunStatus.Running);
    assert.equal((await getRun(db, 'd', 'r4'))?.status, RunStatus.Running);
    // The step ended with its run, and the lost worker no longer lists it as running.
    const [node] = await getNodes(db, r1.id);
    const data = node?.data as { status: number; statusLabel: string; finishedAt: string; error: string };
    assert.deepEqual([data.status, data.statusLabel, data.finishedAt !== '', data.error], [2, 'failed', true, (await getRun(db, 'd', 'r1'))?.error]);
    const dead = (await listWorkers(db)).workers.find((w) => w.id === 'w-dead');
    assert.deepEqual(dead?.running, []);
  });

  test('silent workers that run nothing are forgotten; live ones and ones with runs stay', async () => {
    await upsertWorker(db, { id: 'w-idle-dead', labels: {}, pollers: 1, hostname: 'h', version: 't' });
    await db.query("UPDATE workers SET last_heartbeat = now() - interval '1 minute' WHERE id = 'w-idle-dead'");
    // w-dead's run failed above, so it runs nothing now either; w-live still runs r2.
    await db.query("UPDATE workers SET last_heartbeat = now() - interval '1 minute' WHERE id = 'w-live'");
    assert.deepEqual((await pruneWorkers(db, 30)).sort(), ['local:ghost', 'w-dead', 'w-idle-dead']);
    assert.deepEqual((await listWorkers(db)).workers.map((w) => w.id).sort(), ['local:alive', 'w-live']);
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
