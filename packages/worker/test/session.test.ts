import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { PROTO_FILE, PROTO_LOADER_OPTIONS, type SessionFrame } from '@trellis/core';
import { CoordinatorClient, grpcCode } from '../src/grpc/client.js';
import type { WorkerConfig } from '../src/config.js';

// A stand-in coordinator on loopback, speaking the real .proto: each test scripts its answers.
const service = (grpc.loadPackageDefinition(protoLoader.loadSync(PROTO_FILE, PROTO_LOADER_OPTIONS)) as unknown as {
  trellis: { coordinator: { v1: { Coordinator: { service: grpc.ServiceDefinition } } } };
}).trellis.coordinator.v1.Coordinator.service;

const servers: grpc.Server[] = [];
after(() => {
  for (const server of servers) server.forceShutdown();
});

interface Script {
  /** Answers a session request frame (undefined: never answer it). */
  session?: (frame: SessionFrame, stream: grpc.ServerDuplexStream<SessionFrame, SessionFrame>) => SessionFrame | undefined;
  /** Unary Register, for a coordinator without Session. */
  register?: () => Record<string, unknown>;
}

interface Seen {
  streams: number;
  frames: SessionFrame[];
  unary: number;
}

async function coordinator(script: Script): Promise<{ address: string; seen: Seen }> {
  const seen: Seen = { streams: 0, frames: [], unary: 0 };
  const server = new grpc.Server();
  const implementation: grpc.UntypedServiceImplementation = {
    Register: (_call: unknown, callback: grpc.sendUnaryData<unknown>) => {
      seen.unary += 1;
      callback(null, script.register?.() ?? { heartbeatIntervalMs: 1000, assigned: [] });
    },
  };
  if (script.session !== undefined) {
    const answer = script.session;
    implementation.Session = (stream: grpc.ServerDuplexStream<SessionFrame, SessionFrame>) => {
      seen.streams += 1;
      stream.on('data', (frame: SessionFrame) => {
        seen.frames.push(frame);
        const reply = answer(frame, stream);
        if (reply !== undefined) stream.write(reply);
      });
      stream.on('end', () => stream.end());
    };
  }
  server.addService(service, implementation);
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e !== null ? reject(e) : resolve(p))));
  servers.push(server);
  return { address: `127.0.0.1:${port}`, seen };
}

function client(address: string): CoordinatorClient {
  const config: WorkerConfig = { coordinators: [address], id: 'w', labels: {}, pollers: 1, workDir: '/tmp', shutdownGraceSec: 1, logLevel: 'error' };
  return new CoordinatorClient(config);
}

const registered = (frame: SessionFrame): SessionFrame => ({
  id: frame.id,
  method: '',
  payload: service.Register?.responseSerialize({ heartbeatIntervalMs: 1234, assigned: [] }) ?? Buffer.alloc(0),
  code: 0,
  message: '',
  cancel: false,
});
const register = { workerId: 'w', labels: {}, pollers: 1, hostname: 'h', version: 'v', held: [], listsHeld: true };

describe('the worker session', () => {
  test('calls travel as frames on one stream and are answered by id', async () => {
    const { address, seen } = await coordinator({ session: (frame) => (frame.method === 'Register' ? registered(frame) : undefined) });
    const c = client(address);
    try {
      const answers = await Promise.all([c.request('Register', register), c.request('Register', register)]);
      assert.deepEqual(answers.map((a) => a.heartbeatIntervalMs), [1234, 1234]);
      assert.equal(seen.streams, 1, 'one stream for every call');
      assert.equal(seen.unary, 0);
      assert.deepEqual(seen.frames.map((f) => [f.method, f.cancel]), [['Register', false], ['Register', false]]);
      assert.notEqual(seen.frames[0]?.id, seen.frames[1]?.id);
    } finally {
      c.close();
    }
  });

  test('a call nobody answers ends at its deadline, and the coordinator is told it was given up', async () => {
    const { address, seen } = await coordinator({ session: () => undefined });
    const c = client(address);
    try {
      await assert.rejects(c.request('Poll', { workerId: 'w', pollerIndex: 0, waitMs: 0 }, 200), (e) => grpcCode(e) === grpc.status.DEADLINE_EXCEEDED);
      await waitUntil(() => seen.frames.some((f) => f.cancel));
      const [poll, cancel] = seen.frames;
      assert.deepEqual([poll?.method, cancel?.cancel, cancel?.id], ['Poll', true, poll?.id]);
      // Cancelling a pending call (a long poll at shutdown) also tells the coordinator.
      const pending = c.call('Poll', { workerId: 'w', pollerIndex: 0, waitMs: 0 }, 10_000);
      pending.cancel();
      await assert.rejects(pending.response, (e) => grpcCode(e) === grpc.status.CANCELLED);
      await waitUntil(() => seen.frames.filter((f) => f.cancel).length === 2);
    } finally {
      c.close();
    }
  });

  test('a broken stream fails its calls with UNAVAILABLE; the next call opens a new one', async () => {
    let breakNext = true;
    const { address, seen } = await coordinator({
      session: (frame, stream) => {
        if (!breakNext) return registered(frame);
        breakNext = false;
        stream.emit('error', { code: grpc.status.UNAVAILABLE, details: 'going away' });
        return undefined;
      },
    });
    const c = client(address);
    try {
      await assert.rejects(c.request('Register', register), (e) => grpcCode(e) === grpc.status.UNAVAILABLE);
      assert.equal((await c.request('Register', register)).heartbeatIntervalMs, 1234);
      assert.equal(seen.streams, 2);
    } finally {
      c.close();
    }
  });

  test('a refused session fails its calls with the refusal', async () => {
    const { address } = await coordinator({
      session: (_frame, stream) => {
        stream.emit('error', { code: grpc.status.UNAUTHENTICATED, details: 'invalid worker token' });
        return undefined;
      },
    });
    const c = client(address);
    try {
      await assert.rejects(c.request('Register', register), (e: Error) => grpcCode(e) === grpc.status.UNAUTHENTICATED && /invalid worker token/.test(e.message));
    } finally {
      c.close();
    }
  });

  test('a request too large for a frame goes as a unary call, so small calls never wait behind it', async () => {
    const { address, seen } = await coordinator({ session: (frame) => registered(frame), register: () => ({ heartbeatIntervalMs: 555, assigned: [] }) });
    const c = client(address);
    try {
      const big = { ...register, labels: { blob: 'x'.repeat(100 * 1024) } };
      assert.equal((await c.request('Register', big)).heartbeatIntervalMs, 555);
      assert.equal((await c.request('Register', register)).heartbeatIntervalMs, 1234);
      assert.deepEqual([seen.unary, seen.frames.length], [1, 1]);
    } finally {
      c.close();
    }
  });

  test('a coordinator without Session gets unary calls once it says so', async () => {
    const { address, seen } = await coordinator({ register: () => ({ heartbeatIntervalMs: 777, assigned: [] }) });
    const c = client(address);
    try {
      await assert.rejects(c.request('Register', register), (e) => grpcCode(e) === grpc.status.UNAVAILABLE);
      assert.equal((await c.request('Register', register)).heartbeatIntervalMs, 777);
      assert.equal(seen.unary, 1);
    } finally {
      c.close();
    }
  });
});

async function waitUntil(probe: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !probe(); i += 1) await new Promise((r) => setTimeout(r, 20));
  assert.ok(probe());
}
