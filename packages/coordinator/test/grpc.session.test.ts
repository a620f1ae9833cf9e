import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { status as grpcStatus } from '@grpc/grpc-js';
import type { Task } from '@trellis/core';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';
import { rawSessionClient, rawWorkerClient } from './support/worker-client.js';
import { createSilentLogger } from '@trellis/coordinator';
import { startGrpcServer } from '../src/grpc/server.js';
import type { WorkerHandlers } from '../src/grpc/worker-service.js';

const TOKEN = 'session-test-token';
let t: TestCoordinator;

const remote = 'queue: wide\nworker_selector:\n  pool: s\nsteps:\n  - name: greet\n    command: echo hello\n';

before(async () => {
  t = await startTestCoordinator('grpc_session', { remote }, { workerToken: TOKEN, workerAckTimeoutSec: 5, queues: [{ name: 'wide', maxConcurrency: 10 }] });
});

after(async () => {
  await t.stop();
});

const address = (): string => t.coordinator.grpcAddress ?? '';
const refusedWith = (code: grpcStatus) => (e: { code: grpcStatus }) => e.code === code;

describe('worker session stream', () => {
  test('a session without the token is refused with UNAUTHENTICATED', async () => {
    const stranger = rawSessionClient(address(), 'wrong');
    try {
      const call = stranger.call('Register', { workerId: 'evil', labels: {}, pollers: 1 });
      call.answer.catch(() => undefined);
      const ended = await stranger.closed;
      assert.equal(ended?.code, grpcStatus.UNAUTHENTICATED);
    } finally {
      stranger.close();
    }
  });

  test('calls on a session answer as unary calls do, errors included; an unknown call is UNIMPLEMENTED', async () => {
    const session = rawSessionClient(address(), TOKEN);
    try {
      await assert.rejects(session.call('Poll', { workerId: 'nobody', pollerIndex: 0, waitMs: 10 }).answer, refusedWith(grpcStatus.NOT_FOUND));
      await assert.rejects(session.call('Register', { workerId: 'bad id!', labels: {}, pollers: 1 }).answer, refusedWith(grpcStatus.INVALID_ARGUMENT));
      await assert.rejects(session.call('Session', {}).answer, refusedWith(grpcStatus.UNIMPLEMENTED));
      const registered = await session.call<{ heartbeatIntervalMs: number }>('Register', { workerId: 'sw1', labels: { pool: 's' }, pollers: 2 }).answer;
      assert.ok(registered.heartbeatIntervalMs > 0);
      assert.equal((await t.call('POST', '/dags/remote/enqueue', { dagRunId: 'r1' })).status, 200);
      // Two calls in flight on one stream: a long poll, then an ack that answers first.
      const poll = session.call<{ task?: Task | null }>('Poll', { workerId: 'sw1', pollerIndex: 0, waitMs: 5000 }).answer;
      const task = (await poll).task;
      assert.equal(task?.ref.dagRunId, 'r1');
      const idle = session.call<{ task?: Task | null }>('Poll', { workerId: 'sw1', pollerIndex: 1, waitMs: 3000 }).answer;
      const ack = await session.call<{ accepted: boolean }>('AckTask', { workerId: 'sw1', ref: task?.ref }).answer;
      assert.equal(ack.accepted, true);
      assert.equal(((await t.call('GET', '/dag-runs/remote/r1')).json.dagRun as { status: number }).status, 1);
      assert.equal((await idle).task ?? null, null, 'the second poll found nothing and answered after its wait');
    } finally {
      session.close();
    }
  });

  test('a long poll the worker cancels, or whose session ends, is handed nothing: the next poller gets the run', async () => {
    const unary = rawWorkerClient(address(), TOKEN);
    try {
      for (const [i, leave] of [['c1', 'cancel'], ['c2', 'end']] as const) {
        const session = rawSessionClient(address(), TOKEN);
        await session.call('Register', { workerId: 'sw2', labels: { pool: 's' }, pollers: 1 }).answer;
        const poll = session.call<{ task?: Task | null }>('Poll', { workerId: 'sw2', pollerIndex: 0, waitMs: 10_000 });
        poll.answer.catch(() => undefined);
        await new Promise((r) => setTimeout(r, 200));
        if (leave === 'cancel') session.cancel(poll.id);
        else session.close();
        await new Promise((r) => setTimeout(r, 200));
        assert.equal((await t.call('POST', '/dags/remote/enqueue', { dagRunId: i })).status, 200);
        const answer = await unary.call<{ task?: Task | null }>('Poll', { workerId: 'sw2', pollerIndex: 0, waitMs: 1000 });
        assert.equal(answer.task?.ref.dagRunId, i, `after ${leave}, the run went to the live poller`);
        await unary.call('AckTask', { workerId: 'sw2', ref: answer.task?.ref });
        session.close();
      }
    } finally {
      unary.close();
    }
  });
});

describe('hand-outs a worker gave up on', () => {
  test('a poll cancelled after its answer went out gives the run back at once, not after the ack timeout', async () => {
    const session = rawSessionClient(address(), TOKEN);
    try {
      await session.call('Register', { workerId: 'sw-late', labels: { pool: 's' }, pollers: 1 }).answer;
      assert.equal((await t.call('POST', '/dags/remote/enqueue', { dagRunId: 'late-1' })).status, 200);
      const poll = session.call<{ task?: Task | null }>('Poll', { workerId: 'sw-late', pollerIndex: 0, waitMs: 5000 });
      const handed = (await poll.answer).task;
      assert.equal(handed?.ref.dagRunId, 'late-1');
      // As a stopping worker does when the answer crossed its cancel: it never acknowledges the task.
      session.cancel(poll.id);
      const given = Date.now();
      let status = 1;
      while (status !== 5 && Date.now() - given < 4000) {
        await new Promise((r) => setTimeout(r, 50));
        status = ((await t.call('GET', '/dag-runs/remote/late-1')).json.dagRun as { status: number }).status;
      }
      assert.equal(status, 5, 'back in the queue before the 5 s ack timeout');
      const again = (await session.call<{ task?: Task | null }>('Poll', { workerId: 'sw-late', pollerIndex: 0, waitMs: 5000 }).answer).task;
      assert.deepEqual(again?.ref, handed?.ref, 'handed out again, same attempt');
      await session.call('AckTask', { workerId: 'sw-late', ref: again?.ref }).answer;
    } finally {
      session.close();
    }
  });
});

describe('coordinator shutdown', () => {
  test('open sessions are drained: a waiting poll is answered empty and the stream ends cleanly instead of being cut', async () => {
    const own = await startTestCoordinator('grpc_session_drain', { remote }, { workerToken: TOKEN });
    const session = rawSessionClient(own.coordinator.grpcAddress ?? '', TOKEN);
    try {
      await session.call('Register', { workerId: 'drained', labels: { pool: 's' }, pollers: 1 }).answer;
      const poll = session.call<{ task?: Task | null }>('Poll', { workerId: 'drained', pollerIndex: 0, waitMs: 20_000 });
      await new Promise((r) => setTimeout(r, 200));
      const stopping = own.stop();
      assert.equal((await poll.answer).task ?? null, null);
      assert.equal(await session.closed, undefined, 'the session ended; it was not cut by a forced shutdown');
      await stopping;
    } finally {
      session.close();
    }
  });
});

describe('answers that cannot be encoded', () => {
  test('become an INTERNAL answer on the session instead of crashing the coordinator', async () => {
    // A handler whose result does not fit the response message (assigned must be a list of refs).
    const handlers = { Register: () => Promise.resolve({ heartbeatIntervalMs: 1000, assigned: 'not a list' }) } as unknown as WorkerHandlers;
    const server = await startGrpcServer('127.0.0.1', 0, { workerToken: TOKEN }, handlers, createSilentLogger());
    const session = rawSessionClient(server.address, TOKEN);
    try {
      await assert.rejects(
        session.call('Register', { workerId: 'enc', labels: {}, pollers: 1 }).answer,
        (e: { code: grpcStatus; details: string }) => e.code === grpcStatus.INTERNAL && /assigned/.test(e.details),
      );
    } finally {
      session.close();
      await server.close();
    }
  });
});
