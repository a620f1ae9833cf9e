import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { status as grpcStatus } from '@grpc/grpc-js';
import type { Task } from '@trellis/core';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';
import { captureLog, type LogCapture } from './support/log-capture.js';
import { rawWorkerClient } from './support/worker-client.js';

const TOKEN = 'errors-test-token';
let t: TestCoordinator;
let log: LogCapture;
let worker: ReturnType<typeof rawWorkerClient>;
let parent: { dagName: string; dagRunId: string; attemptId: string };

const remote = 'worker_selector:\n  pool: x\nsteps:\n  - name: greet\n    command: echo hello\n';

/** A StartSubRun request from w1 for a child of the parent it runs; `change` alters it. */
function subRun(change: Record<string, unknown> = {}): Record<string, unknown> {
  return { workerId: 'w1', parent, rootDagRunName: 'remote', rootDagRunId: 'p1', dagName: 'local', specYaml: '', paramsJson: '', dagRunId: 'p1-child', env: {}, workerSelector: {}, runLocal: false, ...change };
}

function refusedWith(code: grpcStatus, details: RegExp) {
  return (e: { code: grpcStatus; details: string }) => {
    assert.equal(e.code, code, `status ${e.code}: ${e.details}`);
    assert.match(e.details, details);
    return true;
  };
}

before(async () => {
  log = captureLog('info');
  t = await startTestCoordinator('grpc_errors', { remote, local: 'steps:\n  - echo local\n' }, { workerToken: TOKEN }, { logger: log.logger });
  assert.ok(t.coordinator.grpcAddress);
  worker = rawWorkerClient(t.coordinator.grpcAddress, TOKEN);
  assert.equal((await t.call('POST', '/dags/remote/enqueue', { dagRunId: 'p1' })).status, 200);
  await worker.call('Register', { workerId: 'w1', labels: { pool: 'x' }, pollers: 1, hostname: 'h', version: 'test' });
  const answer = await worker.call<{ task?: Task | null }>('Poll', { workerId: 'w1', pollerIndex: 0, waitMs: 5000 });
  assert.ok(answer.task, 'the parent was handed out');
  await worker.call('AckTask', { workerId: 'w1', ref: answer.task.ref });
  parent = answer.task.ref;
});

after(async () => {
  worker.close();
  await t.stop();
});

describe('domain errors over gRPC', () => {
  test("a sub-run the worker asks for wrongly is the worker's answer, with the status of its kind", async () => {
    await assert.rejects(worker.call('StartSubRun', subRun({ dagName: 'nope' })), refusedWith(grpcStatus.NOT_FOUND, /no DAG named nope/));
    await assert.rejects(worker.call('StartSubRun', subRun({ paramsJson: '{"not a name": "x"}' })), refusedWith(grpcStatus.INVALID_ARGUMENT, /invalid params for local/));
    await assert.rejects(worker.call('StartSubRun', subRun({ parent: { ...parent, attemptId: 'stale' } })), refusedWith(grpcStatus.FAILED_PRECONDITION, /no longer current/));
    await assert.rejects(
      worker.call('StopSubRun', { workerId: 'w1', parent, dagName: 'local', dagRunId: 'never-started' }),
      refusedWith(grpcStatus.NOT_FOUND, /no child run never-started of p1/),
    );
  });

  test('none of those refusals is logged as a coordinator fault', () => {
    const faults = log.lines().filter((line) => line.level === 'error');
    assert.deepEqual(faults, []);
    assert.ok(log.lines().some((line) => line.message === 'worker registered'), 'the capture saw the coordinator log');
  });
});
