// The queued sub-run handle the worker and the coordinator's local executor share: a child its
// coordinator queues, waited for, and stopped with its parent whenever the stop comes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RunStatus } from '@trellis/core';
import { queuedSubRun, type SubRunRequest, type SubRunResult } from '@trellis/engine';

const request: SubRunRequest = { dagName: 'child', dagRunId: 'c1', params: '', parent: { dagName: 'p', dagRunId: 'p1', attemptId: 'a1', rootDagRunName: 'p', rootDagRunId: 'p1', parentDagRunName: '', parentDagRunId: '' }, env: {}, maskValues: [] };

/** A promise and the function that settles it. */
function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

test('a stop before the child is queued reaches the coordinator once it is, and once only', async () => {
  const queued = deferred<void>();
  const ended = deferred<SubRunResult>();
  const calls: string[] = [];
  const handle = queuedSubRun(request, {
    enqueue: async () => {
      calls.push('enqueue');
      await queued.promise;
    },
    waitForEnd: () => ended.promise,
    stop: () => {
      calls.push('stop');
    },
  });
  handle.stop();
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(calls, ['enqueue'], 'nothing to stop before the coordinator holds the child');
  queued.resolve();
  await new Promise((r) => setImmediate(r));
  handle.stop();
  assert.deepEqual(calls, ['enqueue', 'stop']);
  ended.resolve({ status: RunStatus.Aborted, outputs: {} });
  assert.deepEqual(await handle.done, { status: RunStatus.Aborted, outputs: {} });
});

test("the child's outcome counts once a stop the host waits for is over", async () => {
  const stopDone = deferred<void>();
  let stopFinished = false;
  const handle = queuedSubRun(request, {
    enqueue: () => Promise.resolve(),
    waitForEnd: async () => {
      await new Promise((r) => setImmediate(r));
      return { status: RunStatus.Aborted, outputs: { a: '1' } };
    },
    stop: async () => {
      await stopDone.promise;
      stopFinished = true;
    },
  });
  await new Promise((r) => setImmediate(r));
  handle.stop();
  setTimeout(() => stopDone.resolve(), 20);
  const result = await handle.done;
  assert.equal(stopFinished, true);
  assert.deepEqual(result, { status: RunStatus.Aborted, outputs: { a: '1' } });
});

test('a refused enqueue or a failed wait ends the child Failed, with the reason', async () => {
  const refused = queuedSubRun(request, { enqueue: () => Promise.reject(new Error('no DAG named child')), waitForEnd: () => Promise.reject(new Error('unreachable')), stop: () => undefined });
  assert.deepEqual(await refused.done, { status: RunStatus.Failed, outputs: {}, error: 'sub-DAG run child: no DAG named child' });
  const lost = queuedSubRun(request, { enqueue: () => Promise.resolve(), waitForEnd: () => Promise.reject(new Error('connection reset')), stop: () => undefined });
  assert.deepEqual(await lost.done, { status: RunStatus.Failed, outputs: {}, error: 'sub-DAG run child: connection reset' });
});
