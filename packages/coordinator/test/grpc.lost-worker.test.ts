// A worker that falls silent past the heartbeat timeout loses its running attempt: the run fails
// with an error naming the worker, and when the worker comes back it is told to cancel the
// attempt, and nothing it still reports of it (log text, outputs, a final status) is kept.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Task } from '@trellis/core';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';
import { rawWorkerClient } from './support/worker-client.js';
import { snapshotJson } from './support/report-snapshot.js';

const TOKEN = 'lost-worker-token';
let t: TestCoordinator;
let worker: ReturnType<typeof rawWorkerClient>;

const dag = 'worker_selector:\n  pool: x\nsteps:\n  - name: work\n    command: sleep 60\n';

const snapshot = (task: Task, status: number): string => snapshotJson(task, { status, step: 'work', stdout: 'work.out' });

async function runDetails(): Promise<{ status: number; error: string; nodes: Array<{ stdout: string }> }> {
  return (await t.call('GET', '/dag-runs/remote/gone-1')).json.dagRun as { status: number; error: string; nodes: Array<{ stdout: string }> };
}

before(async () => {
  t = await startTestCoordinator('grpc_lost_worker', { remote: dag }, { workerToken: TOKEN, workerHeartbeatTimeoutSec: 2 });
  assert.ok(t.coordinator.grpcAddress);
  worker = rawWorkerClient(t.coordinator.grpcAddress, TOKEN);
});

after(async () => {
  worker.close();
  await t.stop();
});

test('a lost worker that comes back is told to cancel its attempt, and its late reports are refused as stale', async () => {
  await worker.call('Register', { workerId: 'w-gone', labels: { pool: 'x' }, pollers: 1, hostname: 'h', version: 'test' });
  assert.equal((await t.call('POST', '/dags/remote/enqueue', { dagRunId: 'gone-1' })).status, 200);
  const { task } = await worker.call<{ task?: Task | null }>('Poll', { workerId: 'w-gone', pollerIndex: 0, waitMs: 5000 });
  assert.ok(task);
  assert.equal((await worker.call<{ accepted: boolean }>('AckTask', { workerId: 'w-gone', ref: task.ref })).accepted, true);
  const running = [{ ref: task.ref, startedAt: '', rootDagRunName: 'remote', rootDagRunId: 'gone-1', parentDagRunName: '', parentDagRunId: '' }];
  assert.deepEqual((await worker.call<{ cancel: unknown[] }>('Heartbeat', { workerId: 'w-gone', running, pollersTotal: 1, pollersBusy: 1 })).cancel, []);
  const early = [
    { seq: 1, statusJson: snapshot(task, 1) },
    { seq: 2, log: { stream: 'work.out', offset: 0, data: Buffer.from('before\n') } },
  ];
  assert.equal((await worker.call<{ appliedSeq: number }>('Report', { workerId: 'w-gone', ref: task.ref, events: early })).appliedSeq, 2);

  // Silence: no heartbeat from now on. The monitor fails the run once the timeout has passed.
  const deadline = Date.now() + 15_000;
  let run = await runDetails();
  while (run.status !== 2 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    run = await runDetails();
  }
  assert.equal(run.status, 2);
  assert.match(run.error, /^worker w-gone was lost: no heartbeat for more than 2 s/);

  // Back from the silence, the worker's first call is a report: it must not reach the run's logs.
  const late = [
    { seq: 3, log: { stream: 'work.out', offset: 7, data: Buffer.from('after\n') } },
    { seq: 4, outputsJson: JSON.stringify({ metadata: { dagName: 'remote', dagRunId: 'gone-1', attemptId: task.ref.attemptId, params: '', status: 'succeeded', completedAt: '' }, outputs: { late: 'yes' } }) },
    { seq: 5, statusJson: snapshot(task, 4) },
  ];
  assert.equal((await worker.call<{ stale: boolean }>('Report', { workerId: 'w-gone', ref: task.ref, events: late })).stale, true);
  const told = await worker.call<{ cancel: Array<{ dagRunId: string; attemptId: string }> }>('Heartbeat', { workerId: 'w-gone', running, pollersTotal: 1, pollersBusy: 1 });
  assert.deepEqual(told.cancel.map((c) => [c.dagRunId, c.attemptId]), [['gone-1', task.ref.attemptId]]);
  // Heard from again: what was applied before the loss is answered as applied, anything new is still stale.
  const resent = await worker.call<{ appliedSeq: number; stale: boolean }>('Report', { workerId: 'w-gone', ref: task.ref, events: early });
  assert.deepEqual([resent.appliedSeq, resent.stale], [2, false]);
  assert.equal((await worker.call<{ stale: boolean }>('Report', { workerId: 'w-gone', ref: task.ref, events: late })).stale, true);

  const after = await runDetails();
  assert.deepEqual([after.status, after.error], [run.status, run.error]);
  const stdout = after.nodes[0]?.stdout ?? '';
  assert.ok(stdout.startsWith(t.dir), `step log ${stdout}`);
  const log = (await t.call('GET', '/dag-runs/remote/gone-1/steps/work/log')).json as { content: string };
  assert.equal(log.content, 'before');
  const outputs = (await t.call('GET', '/dag-runs/remote/gone-1/outputs')).json as { outputs: Record<string, string> };
  assert.deepEqual(outputs.outputs, {});
});

test("a lost worker's run ends with its steps, and the silent worker leaves the list within a bounded time", async () => {
  const run = await runDetails();
  const nodes = run.nodes as unknown as Array<{ status: number; finishedAt: string; error: string }>;
  assert.deepEqual(nodes.map((n) => [n.status, n.finishedAt !== '', n.error]), [[2, true, run.error]]);
  // Silent from now on. Twice the heartbeat timeout (2 s here) after its last heartbeat it is forgotten.
  const listed = async () => ((await t.call('GET', '/workers')).json.workers as Array<{ id: string; running_tasks: unknown[] }>).find((w) => w.id === 'w-gone');
  assert.ok(await listed(), 'still listed right after its last heartbeat');
  const deadline = Date.now() + 15_000;
  while ((await listed()) !== undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
  assert.equal(await listed(), undefined, 'the dead worker left GET /workers');
  // Back after all: it is told to register again, and is listed again once it does.
  const beat = await worker.call<{ reregister: boolean }>('Heartbeat', { workerId: 'w-gone', running: [], pollersTotal: 1, pollersBusy: 0, claiming: [] });
  assert.equal(beat.reregister, true);
});
