// What a worker holds wins over what the coordinator recorded on its id: a worker restarted
// with the same id registers holding nothing, so the runs it had started fail at once with an
// error that says so and hand-outs it never acknowledged go back to the queue; a heartbeat that
// leaves out a started attempt does the same after a short grace; a stop of such a run ends it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Task, TaskRef } from '@trellis/core';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';
import { rawWorkerClient } from './support/worker-client.js';
import { snapshotJson } from './support/report-snapshot.js';

const TOKEN = 'held-attempts-token';
/** The coordinator spares a started attempt this long after its ack (HELD_GRACE_SEC), plus a margin. */
const PAST_GRACE_MS = 3300;

let t: TestCoordinator;
let worker: ReturnType<typeof rawWorkerClient>;

const dag = 'queue: four\nworker_selector:\n  pool: h\nsteps:\n  - name: work\n    command: sleep 60\n';

interface RunView {
  status: number;
  error: string;
  nodes: Array<{ status: number; finishedAt: string; error: string }>;
}

async function run(id: string): Promise<RunView> {
  return (await t.call('GET', `/dag-runs/held/${id}`)).json.dagRun as RunView;
}

const register = (workerId: string, held: TaskRef[], listsHeld = true) =>
  worker.call<{ assigned: TaskRef[] }>('Register', { workerId, labels: { pool: 'h' }, pollers: 4, hostname: 'h', version: 'test', held, listsHeld });

const heartbeat = (workerId: string, running: TaskRef[], claiming: TaskRef[] = []) =>
  worker.call<{ cancel: TaskRef[] }>('Heartbeat', {
    workerId, running: running.map((ref) => ({ ref, startedAt: '', rootDagRunName: 'held', rootDagRunId: ref.dagRunId, parentDagRunName: '', parentDagRunId: '' })),
    pollersTotal: 4, pollersBusy: running.length, claiming,
  });

/** Enqueues a run and hands it to `workerId`; acknowledged (and reported Running) unless `ack` is false. */
async function handOut(workerId: string, id: string, ack = true): Promise<Task> {
  assert.equal((await t.call('POST', '/dags/held/enqueue', { dagRunId: id })).status, 200);
  const { task } = await worker.call<{ task?: Task | null }>('Poll', { workerId, pollerIndex: 0, waitMs: 5000 });
  assert.ok(task, `run ${id} was handed out`);
  assert.equal(task.ref.dagRunId, id);
  if (!ack) return task;
  assert.equal((await worker.call<{ accepted: boolean }>('AckTask', { workerId, ref: task.ref })).accepted, true);
  const events = [{ seq: 1, statusJson: snapshotJson(task, { status: 1, step: 'work', stdout: 'work.out' }) }];
  assert.equal((await worker.call<{ appliedSeq: number }>('Report', { workerId, ref: task.ref, events })).appliedSeq, 1);
  return task;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

before(async () => {
  t = await startTestCoordinator('grpc_held_attempts', { held: dag }, { workerToken: TOKEN, queues: [{ name: 'four', maxConcurrency: 4 }] });
  assert.ok(t.coordinator.grpcAddress);
  worker = rawWorkerClient(t.coordinator.grpcAddress, TOKEN);
});

after(async () => {
  worker.close();
  await t.stop();
});

describe('attempts a worker no longer holds', () => {
  test('a worker registering again holding nothing: its started runs fail at once, its unacknowledged hand-out is requeued', async () => {
    await register('w-restart', []);
    const started = [await handOut('w-restart', 'r1'), await handOut('w-restart', 'r2'), await handOut('w-restart', 'r3')];
    const unacked = await handOut('w-restart', 'r4', false);
    await sleep(PAST_GRACE_MS);
    // The restarted process: same id, holds nothing.
    const answer = await register('w-restart', []);
    assert.deepEqual(answer.assigned, []);
    for (const task of started) {
      const view = await run(task.ref.dagRunId);
      assert.equal(view.status, 2, `${task.ref.dagRunId} failed`);
      assert.match(view.error, /^worker w-restart no longer has this run: its process restarted or dropped the run after it started/);
      // Its step ended with it: no step of an ended run stays Running without a finish time.
      assert.deepEqual(view.nodes.map((n) => [n.status, n.finishedAt !== '', n.error === view.error]), [[2, true, true]]);
    }
    assert.equal((await run('r4')).status, 5, 'the hand-out never acknowledged is queued again');
    const late = await worker.call<{ accepted: boolean }>('AckTask', { workerId: 'w-restart', ref: unacked.ref });
    assert.equal(late.accepted, false, 'the old attempt of the requeued run cannot start any more');
    // The queue's slots are free again: the requeued run is handed out anew, under a new attempt.
    const again = await worker.call<{ task?: Task | null }>('Poll', { workerId: 'w-restart', pollerIndex: 0, waitMs: 5000 });
    assert.equal(again.task?.ref.dagRunId, 'r4');
    assert.notEqual(again.task.ref.attemptId, unacked.ref.attemptId);
    assert.equal((await worker.call<{ accepted: boolean }>('AckTask', { workerId: 'w-restart', ref: again.task.ref })).accepted, true);
  });

  test('registering with what it holds keeps those runs; a worker that does not list what it holds loses nothing', async () => {
    await register('w-keep', []);
    const kept = await handOut('w-keep', 'k1');
    await handOut('w-keep', 'k2');
    await sleep(PAST_GRACE_MS);
    const answer = await register('w-keep', [kept.ref]);
    assert.deepEqual(answer.assigned.map((r) => r.dagRunId), ['k1']);
    assert.equal((await run('k1')).status, 1);
    assert.equal((await run('k2')).status, 2);
    // An older worker sends no list: nothing is ended on its word.
    const third = await handOut('w-keep', 'k3');
    await sleep(PAST_GRACE_MS);
    const old = await register('w-keep', [], false);
    assert.deepEqual(old.assigned.map((r) => r.dagRunId).sort(), ['k1', 'k3']);
    assert.equal((await run('k3')).status, 1);
    await stopAll(['k1', 'k3'], [kept.ref, third.ref], 'w-keep');
  });

  test('a heartbeat that leaves out a started attempt ends it after the grace; a fresh ack and a claim in progress are spared', async () => {
    await register('w-beat', []);
    const a = await handOut('w-beat', 'h1');
    const b = await handOut('w-beat', 'h2');
    // Just acknowledged: the worker may not have listed it yet.
    assert.deepEqual((await heartbeat('w-beat', [a.ref])).cancel, []);
    assert.equal((await run('h2')).status, 1);
    await sleep(PAST_GRACE_MS);
    // Claimed (its ack may be on the way) counts as held too.
    await heartbeat('w-beat', [a.ref], [b.ref]);
    assert.equal((await run('h2')).status, 1);
    await heartbeat('w-beat', [a.ref]);
    const lost = await run('h2');
    assert.equal(lost.status, 2);
    assert.match(lost.error, /^worker w-beat no longer has this run/);
    assert.equal((await run('h1')).status, 1, 'the attempt the worker listed runs on');
    await stopAll(['h1'], [a.ref], 'w-beat');
  });

  test('stopping a run its worker does not hold ends it (before, the stop answered 200 and changed nothing)', async () => {
    await register('w-stop', []);
    await handOut('w-stop', 's1');
    await sleep(PAST_GRACE_MS);
    assert.equal((await t.call('POST', '/dag-runs/held/s1/stop')).status, 200);
    await heartbeat('w-stop', []);
    const stopped = await run('s1');
    assert.equal(stopped.status, 3);
    assert.match(stopped.error, /^stopped: worker w-stop no longer had this run/);
  });
});

/** Ends runs the worker does hold: stopped, cancelled on its next heartbeat, and reported Aborted. */
async function stopAll(ids: string[], refs: TaskRef[], workerId: string): Promise<void> {
  for (const id of ids) assert.equal((await t.call('POST', `/dag-runs/held/${id}/stop`)).status, 200);
  const { cancel } = await heartbeat(workerId, refs);
  assert.deepEqual(cancel.map((r) => r.dagRunId).sort(), [...ids].sort());
  for (const ref of refs) {
    const task = { ref, rootDagRunName: 'held', rootDagRunId: ref.dagRunId } as Task;
    const events = [{ seq: 2, statusJson: snapshotJson(task, { status: 3, step: 'work', stdout: 'work.out' }) }];
    await worker.call('Report', { workerId, ref, events });
  }
  for (const id of ids) assert.equal((await run(id)).status, 3);
}
