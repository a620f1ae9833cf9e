import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { status as grpcStatus } from '@grpc/grpc-js';
import type { Task } from '@trellis/core';
import { appendLogChunks } from '@trellis/store';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';
import { rawWorkerClient } from './support/worker-client.js';
import { snapshotJson } from './support/report-snapshot.js';

const TOKEN = 'protocol-test-token';
let t: TestCoordinator;
let worker: ReturnType<typeof rawWorkerClient>;

const remote = 'queue: wide\nworker_selector:\n  pool: x\nparams: [WHO=world]\nsteps:\n  - name: greet\n    command: echo hello $WHO\n';

async function enqueue(dagRunId: string, dag = 'remote'): Promise<void> {
  const { status } = await t.call('POST', `/dags/${dag}/enqueue`, { dagRunId });
  assert.equal(status, 200);
}

async function pollTask(workerId = 'w1'): Promise<Task> {
  const answer = await worker.call<{ task?: Task | null }>('Poll', { workerId, pollerIndex: 0, waitMs: 5000 });
  assert.ok(answer.task, 'a task was handed out');
  return answer.task;
}

/** A run of `remote` queued, handed to w1 and acknowledged: what a worker holds when it starts. */
async function startedTask(dagRunId: string): Promise<Task> {
  await enqueue(dagRunId);
  const task = await pollTask();
  await worker.call('AckTask', { workerId: 'w1', ref: task.ref });
  return task;
}

async function details(dagRunId: string) {
  return (await t.call('GET', `/dag-runs/remote/${dagRunId}`)).json.dagRun as { status: number; attemptId: string; error: string; nodes: Array<{ stdout: string; status: number }>; conditions?: Array<{ reason: string }> };
}

/** The stored stdout of step greet, as the API pages it. */
async function stepLog(dagRunId: string): Promise<string> {
  return ((await t.call('GET', `/dag-runs/remote/${dagRunId}/steps/greet/log`)).json as { content: string }).content;
}

/** The one-step `remote` DAG's snapshot (step greet). */
const snapshot = (task: Task, status: number, nodeStatus: number, stdout: string): string => snapshotJson(task, { status, step: 'greet', nodeStatus, stdout });

before(async () => {
  t = await startTestCoordinator('grpc_protocol', { remote, local: 'steps:\n  - echo local\n' }, { workerToken: TOKEN, workerAckTimeoutSec: 1, queues: [{ name: 'wide', maxConcurrency: 3 }] });
  assert.ok(t.coordinator.grpcAddress);
  worker = rawWorkerClient(t.coordinator.grpcAddress, TOKEN);
});

after(async () => {
  worker.close();
  await t.stop();
});

describe('worker protocol', () => {
  test('calls without the token are refused; an unregistered worker must register before polling', async () => {
    const stranger = rawWorkerClient(t.coordinator.grpcAddress ?? '', 'wrong');
    await assert.rejects(stranger.call('Register', { workerId: 'evil', labels: {}, pollers: 1 }), (e: { code: grpcStatus }) => e.code === grpcStatus.UNAUTHENTICATED);
    stranger.close();
    await assert.rejects(worker.call('Poll', { workerId: 'nobody', pollerIndex: 0, waitMs: 10 }), (e: { code: grpcStatus }) => e.code === grpcStatus.NOT_FOUND);
    await assert.rejects(worker.call('Register', { workerId: 'bad id!', labels: {}, pollers: 1 }), (e: { code: grpcStatus }) => e.code === grpcStatus.INVALID_ARGUMENT);
  });

  test('a queued remote run waits with NoAvailableWorker, then WorkerSelectorNotMatched, until a matching worker polls', async () => {
    await enqueue('c1');
    assert.equal((await details('c1')).conditions?.[0]?.reason, 'NoAvailableWorker');
    await worker.call('Register', { workerId: 'other', labels: { pool: 'y' }, pollers: 1, hostname: 'h', version: 'test' });
    await worker.call('Heartbeat', { workerId: 'other', running: [], pollersTotal: 1, pollersBusy: 0 });
    const waiting = await details('c1');
    assert.equal(waiting.conditions?.[0]?.reason, 'WorkerSelectorNotMatched');
    const empty = await worker.call<{ task?: Task | null }>('Poll', { workerId: 'other', pollerIndex: 0, waitMs: 300 });
    assert.equal(empty.task ?? undefined, undefined, 'a worker whose labels do not match gets nothing');
    await worker.call('Register', { workerId: 'w1', labels: { pool: 'x', zone: 'eu' }, pollers: 2, hostname: 'h', version: 'test' });
    const task = await pollTask();
    assert.equal(task.ref.dagRunId, 'c1');
    assert.match(task.specYaml, /echo hello/);
    assert.deepEqual(JSON.parse(task.paramsJson), [{ name: 'WHO', value: 'world' }]);
    assert.equal((await worker.call<{ accepted: boolean }>('AckTask', { workerId: 'w1', ref: task.ref })).accepted, true);
    assert.equal((await worker.call<{ accepted: boolean }>('AckTask', { workerId: 'w1', ref: task.ref })).accepted, true, 'a repeated ack is accepted');
    assert.equal((await worker.call<{ accepted: boolean }>('AckTask', { workerId: 'other', ref: task.ref })).accepted, false, 'another worker cannot claim it');
    const workers = (await t.call('GET', '/workers')).json as { workers: Array<{ id: string; health_status: string; labels: Record<string, string> }> };
    assert.deepEqual(workers.workers.map((w) => [w.id, w.health_status]), [['other', 'WORKER_HEALTH_STATUS_HEALTHY'], ['w1', 'WORKER_HEALTH_STATUS_HEALTHY']]);
    assert.deepEqual(workers.workers[1]?.labels, { pool: 'x', zone: 'eu' });
  });

  test('a log chunk past the stored end is refused and counted; the sequence moves on, so the run still ends', async () => {
    const refusedBytes = async () => Number(/^svc_log_bytes_refused_total (\d+)$/m.exec(await (await fetch(`${t.coordinator.apiUrl}/metrics`)).text())?.[1]);
    const before = await refusedBytes();
    const task = await startedTask('gap1');
    const events = [
      { seq: 1, log: { stream: 'greet.out', offset: 0, data: Buffer.from('one\n') } },
      // Bytes 4-9 never came (a batch the worker dropped): resending this chunk could never fill them.
      { seq: 2, log: { stream: 'greet.out', offset: 10, data: Buffer.from('three\n') } },
      { seq: 3, statusJson: snapshot(task, 4, 4, 'greet.out') },
    ];
    assert.equal((await worker.call<{ appliedSeq: number }>('Report', { workerId: 'w1', ref: task.ref, events })).appliedSeq, 3);
    assert.equal((await details('gap1')).status, 4);
    assert.equal(await stepLog('gap1'), 'one', 'nothing is stored past the hole');
    assert.equal((await refusedBytes()) - before, 6);
  });

  test('reports apply in order, resends change nothing, log chunks land at their offsets, stale attempts are refused', async () => {
    const task = await startedTask('r1');
    const first = [
      { seq: 1, statusJson: snapshot(task, 1, 1, 'greet.out') },
      { seq: 2, log: { stream: 'greet.out', offset: 0, data: Buffer.from('hello ') } },
    ];
    assert.equal((await worker.call<{ appliedSeq: number }>('Report', { workerId: 'w1', ref: task.ref, events: first })).appliedSeq, 2);
    const again = await worker.call<{ appliedSeq: number; stale: boolean }>('Report', { workerId: 'w1', ref: task.ref, events: first });
    assert.deepEqual([again.appliedSeq, again.stale], [2, false]);
    const rest = [
      { seq: 2, log: { stream: 'greet.out', offset: 0, data: Buffer.from('hello ') } },
      { seq: 3, log: { stream: 'greet.out', offset: 6, data: Buffer.from('world\n') } },
      { seq: 4, log: { stream: '../../../escape.txt', offset: 0, data: Buffer.from('nope') } },
      { seq: 5, outputsJson: JSON.stringify({ metadata: { dagName: 'remote', dagRunId: 'r1', attemptId: task.ref.attemptId, params: '', status: 'succeeded', completedAt: '' }, outputs: { greeting: 'hello world' } }) },
      { seq: 6, statusJson: snapshot(task, 4, 4, 'greet.out') },
    ];
    assert.equal((await worker.call<{ appliedSeq: number }>('Report', { workerId: 'w1', ref: task.ref, events: rest })).appliedSeq, 6);
    const run = await details('r1');
    assert.equal(run.status, 4);
    assert.ok(run.nodes[0]?.stdout.startsWith(t.dir), `log path ${run.nodes[0]?.stdout} is the coordinator's`);
    // Stored in the database: the escaping stream was dropped, the resent bytes kept once.
    const log = (await t.call('GET', '/dag-runs/remote/r1/steps/greet/log')).json as { content: string; totalLines: number };
    assert.deepEqual([log.content, log.totalLines], ['hello world', 1]);
    const outputs = (await t.call('GET', '/dag-runs/remote/r1/outputs')).json as { outputs: Record<string, string> };
    assert.deepEqual(outputs.outputs, { greeting: 'hello world' });
    const stale = await worker.call<{ stale: boolean }>('Report', { workerId: 'w1', ref: { ...task.ref, attemptId: 'old-attempt' }, events: [{ seq: 7, statusJson: snapshot(task, 2, 2, '') }] });
    assert.equal(stale.stale, true);
    assert.equal((await details('r1')).status, 4, 'a stale report changes nothing');
    // A report body that is not the protocol's JSON is the sender's fault (checked on a run still going).
    const going = await startedTask('r-malformed');
    await assert.rejects(
      worker.call('Report', { workerId: 'w1', ref: going.ref, events: [{ seq: 1, statusJson: '{not json' }] }),
      (e: { code: grpcStatus; details: string }) => e.code === grpcStatus.INVALID_ARGUMENT && /malformed report/.test(e.details),
    );
    await worker.call('Report', { workerId: 'w1', ref: going.ref, events: [{ seq: 1, statusJson: snapshot(going, 4, 4, 'greet.out') }] });
  });

  test('a batch with several snapshots stores the newest, after its log chunks', async () => {
    const task = await startedTask('r-batch');
    const events = [
      { seq: 1, statusJson: snapshot(task, 1, 1, 'greet.out') },
      { seq: 2, log: { stream: 'greet.out', offset: 0, data: Buffer.from('done\n') } },
      { seq: 3, statusJson: snapshot(task, 4, 4, 'greet.out') },
    ];
    assert.equal((await worker.call<{ appliedSeq: number }>('Report', { workerId: 'w1', ref: task.ref, events })).appliedSeq, 3);
    const run = await details('r-batch');
    assert.deepEqual([run.status, run.nodes[0]?.status], [4, 4]);
    assert.equal(await stepLog('r-batch'), 'done');
    // The sequence advanced with the snapshot: an event numbered below it is not applied again.
    const late = await worker.call<{ appliedSeq: number; stale: boolean }>('Report', { workerId: 'w1', ref: task.ref, events: [{ seq: 2, log: { stream: 'greet.out', offset: 0, data: Buffer.from('oops\n') } }] });
    assert.deepEqual([late.appliedSeq, late.stale], [3, false]);
    assert.equal(await stepLog('r-batch'), 'done');
  });

  test('bytes another coordinator stored meanwhile: the next batch falls back to the locking path and keeps each byte once', async () => {
    const task = await startedTask('elsewhere');
    const first = [
      { seq: 1, statusJson: snapshot(task, 1, 1, 'greet.out') },
      { seq: 2, log: { stream: 'greet.out', offset: 0, data: Buffer.from('one\n') } },
    ];
    assert.equal((await worker.call<{ appliedSeq: number }>('Report', { workerId: 'w1', ref: task.ref, events: first })).appliedSeq, 2);
    // Another coordinator stores the worker's next batch, whose answer is lost; this one has not seen it.
    const [stored] = await t.coordinator.db.query<{ runId: number; stream: string }>(
      "SELECT s.run_id::int AS \"runId\", s.stream FROM run_log_streams s JOIN runs r ON r.id = s.run_id WHERE r.dag_run_id = 'elsewhere' AND s.stream LIKE '%greet.out'",
    );
    assert.ok(stored !== undefined);
    assert.equal((await appendLogChunks(t.coordinator.db, stored.runId, task.ref.attemptId, [{ stream: stored.stream, offset: 4, data: Buffer.from('two\n') }])).stored, 4);
    const resent = [
      { seq: 3, log: { stream: 'greet.out', offset: 4, data: Buffer.from('two\n') } },
      { seq: 4, log: { stream: 'greet.out', offset: 8, data: Buffer.from('three\n') } },
      { seq: 5, statusJson: snapshot(task, 4, 4, 'greet.out') },
    ];
    assert.equal((await worker.call<{ appliedSeq: number }>('Report', { workerId: 'w1', ref: task.ref, events: resent })).appliedSeq, 5);
    assert.equal((await details('elsewhere')).status, 4);
    assert.equal(await stepLog('elsewhere'), 'one\ntwo\nthree');
  });

  test('a hand-out nobody acknowledges goes back to the queue under a new attempt; the late ack is refused', async () => {
    await enqueue('u1');
    const task = await pollTask();
    const before = await details('u1');
    assert.equal(before.status, 1);
    await new Promise((r) => setTimeout(r, 2600));
    const requeued = await details('u1');
    assert.equal(requeued.status, 5);
    assert.notEqual(requeued.attemptId, task.ref.attemptId);
    assert.equal((await worker.call<{ accepted: boolean }>('AckTask', { workerId: 'w1', ref: task.ref })).accepted, false);
    const again = await pollTask();
    assert.equal(again.ref.attemptId, requeued.attemptId);
    await worker.call('AckTask', { workerId: 'w1', ref: again.ref });
  });

  test('stopping a remote run reaches its worker through the heartbeat; unknown workers are told to register', async () => {
    const running = { ref: { dagName: 'remote', dagRunId: 'u1', attemptId: (await details('u1')).attemptId }, startedAt: '', rootDagRunName: 'remote', rootDagRunId: 'u1', parentDagRunName: '', parentDagRunId: '' };
    // The worker lists everything it runs: c1 too (an attempt left out would end as no longer held).
    const c1 = { ...running, ref: { dagName: 'remote', dagRunId: 'c1', attemptId: (await details('c1')).attemptId }, rootDagRunId: 'c1' };
    const quiet = await worker.call<{ cancel: unknown[]; reregister: boolean }>('Heartbeat', { workerId: 'w1', running: [running, c1], pollersTotal: 2, pollersBusy: 2 });
    assert.deepEqual([quiet.cancel.length, quiet.reregister], [0, false]);
    assert.equal((await t.call('POST', '/dag-runs/remote/u1/stop')).status, 200);
    const told = await worker.call<{ cancel: Array<{ dagRunId: string }> }>('Heartbeat', { workerId: 'w1', running: [running, c1], pollersTotal: 2, pollersBusy: 2 });
    assert.deepEqual(told.cancel.map((c) => c.dagRunId), ['u1']);
    const task = { ref: running.ref, rootDagRunName: 'remote', rootDagRunId: 'u1', paramsJson: '[]' } as Task;
    await worker.call('Report', { workerId: 'w1', ref: running.ref, events: [{ seq: 1, statusJson: snapshot(task, 3, 3, 'greet.out') }] });
    assert.equal((await details('u1')).status, 3);
    const unknown = await worker.call<{ reregister: boolean }>('Heartbeat', { workerId: 'ghost', running: [], pollersTotal: 1, pollersBusy: 0 });
    assert.equal(unknown.reregister, true);
  });

  test('queues: summaries and paged items; an unknown queue is 404', async () => {
    for (const id of ['q1', 'q2', 'q3']) await enqueue(id, 'local');
    const summary = (await t.call('GET', '/queues')).json as { queues: Array<{ name: string; type: string; maxConcurrency?: number; runningCount: number; running: Array<{ dagRunId: string }> }>; summary: { totalQueues: number } };
    const wide = summary.queues.find((q) => q.name === 'wide');
    assert.ok(wide);
    assert.deepEqual([wide.type, wide.maxConcurrency, wide.runningCount], ['global', 3, 1]);
    assert.deepEqual(wide.running.map((r) => r.dagRunId), ['c1'], 'c1 still runs on its worker; u1 was stopped');
    assert.ok(summary.summary.totalQueues >= 1);
    // Admission is asynchronous: on a loaded machine the local runs may take seconds to leave the queue.
    const queued = async () => ((await t.call('GET', '/queues/local/items?type=queued&perPage=2')).json as { pagination: { totalRecords: number } }).pagination.totalRecords;
    let left = await queued();
    for (const deadline = Date.now() + 15_000; left > 0 && Date.now() < deadline; left = await queued()) await new Promise((r) => setTimeout(r, 100));
    assert.equal(left, 0, 'local runs were admitted and ran');
    const items = (await t.call('GET', '/queues/wide/items?type=running&perPage=1&page=1')).json as { items: Array<{ dagRunId: string }>; pagination: { totalRecords: number; totalPages: number } };
    assert.deepEqual([items.items.map((i) => i.dagRunId), items.pagination.totalRecords], [['c1'], 1]);
    assert.equal((await t.call('GET', '/queues/nope/items')).status, 404);
    assert.equal((await t.call('GET', '/queues/wide/items?type=sideways')).status, 400);
  });

  test("StartSubRun records the env a parent hands its child and the child's task carries it; bad names are refused", async () => {
    const parent = { dagName: 'remote', dagRunId: 'c1', attemptId: (await details('c1')).attemptId };
    const request = { workerId: 'w1', parent, rootDagRunName: 'remote', rootDagRunId: 'c1', dagName: 'local', specYaml: '', paramsJson: '', dagRunId: 'c1-item-0', workerSelector: { pool: 'x' }, runLocal: false };
    await assert.rejects(
      worker.call('StartSubRun', { ...request, env: { 'NOT A NAME': 'x' } }),
      (e: { code: grpcStatus; details: string }) => e.code === grpcStatus.INVALID_ARGUMENT && /not an environment variable name/.test(e.details),
    );
    assert.deepEqual(await worker.call('StartSubRun', { ...request, env: { ITEM: 'a' } }), { dagRunId: 'c1-item-0' });
    const task = await pollTask();
    assert.deepEqual([task.ref.dagRunId, task.parentDagRunId, task.env], ['c1-item-0', 'c1', { ITEM: 'a' }]);
    await worker.call('AckTask', { workerId: 'w1', ref: task.ref });
  });
});

describe('without the gRPC server', () => {
  test('GET /workers is 503 service_unavailable and remote runs wait with DispatchUnavailable', async () => {
    const off = await startTestCoordinator('grpc_off', { remote: 'worker_selector:\n  pool: x\nsteps:\n  - echo hi\n' }, { grpcPort: -1 });
    try {
      const { status, json } = await off.call('GET', '/workers');
      assert.equal(status, 503);
      assert.equal(json.code, 'service_unavailable');
      await off.call('POST', '/dags/remote/enqueue', { dagRunId: 'x1' });
      const run = (await off.call('GET', '/dag-runs/remote/x1')).json.dagRun as { conditions: Array<{ reason: string }> };
      assert.equal(run.conditions[0]?.reason, 'DispatchUnavailable');
    } finally {
      await off.stop();
    }
  });
});
