import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { PROTO_FILE, PROTO_LOADER_OPTIONS, RunStatus, type ReportEvent, type ReportRequest, type ReportResponse } from '@trellis/core';
import type { RunSnapshot } from '@trellis/engine';
import { CoordinatorClient, createWorkerLogger, loadWorkerConfig } from '@trellis/worker';
import { ReportBuffer } from '../src/reporting/report-buffer.js';

interface ServicePackage {
  trellis: { coordinator: { v1: { Coordinator: { service: grpc.ServiceDefinition } } } };
}

/** A real gRPC server that plays the coordinator's Report: it can refuse calls, and records what it applied. */
class ReportSink {
  failNext = 0;
  refuseNext = 0;
  stale = false;
  applied = 0;
  calls = 0;
  readonly events: ReportEvent[] = [];
  readonly server = new grpc.Server();
  port = 0;

  async start(): Promise<void> {
    const pkg = grpc.loadPackageDefinition(protoLoader.loadSync(PROTO_FILE, PROTO_LOADER_OPTIONS)) as unknown as ServicePackage;
    this.server.addService(pkg.trellis.coordinator.v1.Coordinator.service, {
      Report: (call: grpc.ServerUnaryCall<ReportRequest, ReportResponse>, callback: grpc.sendUnaryData<ReportResponse>) => {
        this.calls += 1;
        if (this.failNext > 0) {
          this.failNext -= 1;
          callback({ code: grpc.status.UNAVAILABLE, details: 'coordinator restarting' });
          return;
        }
        if (this.refuseNext > 0) {
          this.refuseNext -= 1;
          callback({ code: grpc.status.INVALID_ARGUMENT, details: 'malformed report: bad JSON' });
          return;
        }
        for (const event of call.request.events) {
          if (event.seq > this.applied) {
            this.events.push(event);
            this.applied = event.seq;
          }
        }
        callback(null, { appliedSeq: this.applied, stale: this.stale });
      },
    });
    this.port = await new Promise((resolve, reject) => this.server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
  }
}

const sink = new ReportSink();
let client: CoordinatorClient;
const logDir = '/work/attempt';
const ref = { dagName: 'd', dagRunId: 'r', attemptId: 'a1' };
const logger = createWorkerLogger('test', 'error', true);

function snapshot(status: RunStatus): RunSnapshot {
  return { ...ref, rootDagRunName: 'd', rootDagRunId: 'r', parentDagRunName: '', parentDagRunId: '', status, statusLabel: '', startedAt: '', finishedAt: '', log: `${logDir}/run.log`, params: '[]', error: '', nodes: [], handlers: {}, waitingSteps: [] };
}

before(async () => {
  await sink.start();
  client = new CoordinatorClient(loadWorkerConfig({ coordinator: `127.0.0.1:${sink.port}` }, {}));
});

after(() => {
  client.close();
  sink.server.forceShutdown();
});

describe('report buffer', () => {
  test('holds reports while the coordinator is away and delivers each exactly once, with paths relative to the attempt', async () => {
    sink.failNext = 3;
    const buffer = new ReportBuffer(client, 'w', ref, logDir, logger, () => assert.fail('not stale'));
    buffer.onStatus(snapshot(RunStatus.Running));
    buffer.onLog({ stream: 's/stdout', path: `${logDir}/s.out`, offset: 0, data: Buffer.from('one ') });
    buffer.onLog({ stream: 's/stdout', path: `${logDir}/s.out`, offset: 4, data: Buffer.from('two\n') });
    buffer.onLog({ stream: 'x', path: '/elsewhere/file', offset: 0, data: Buffer.from('dropped') });
    buffer.onStatus(snapshot(RunStatus.Success));
    await buffer.settled();
    assert.ok(sink.calls >= 4, `retried after refusals (${sink.calls} calls)`);
    const bodies = sink.events.map((e) => e.body);
    assert.deepEqual(bodies, ['statusJson', 'log', 'statusJson']);
    assert.deepEqual(sink.events.map((e) => e.seq), [1, 2, 3]);
    const log = sink.events[1]?.log;
    assert.deepEqual([log?.stream, log?.offset, log?.data.toString()], ['s.out', 0, 'one two\n']);
    const final = JSON.parse(sink.events[2]?.statusJson ?? '{}') as RunSnapshot;
    assert.deepEqual([final.status, final.log], [RunStatus.Success, 'run.log']);
  });

  test('a stale answer stops the attempt and drops what is held', async () => {
    sink.stale = true;
    let stopped = 0;
    const buffer = new ReportBuffer(client, 'w', { ...ref, attemptId: 'a2' }, logDir, logger, () => (stopped += 1));
    buffer.onStatus(snapshot(RunStatus.Running));
    await buffer.settled();
    buffer.onStatus(snapshot(RunStatus.Success));
    await buffer.settled();
    assert.equal(stopped, 1);
    assert.equal(buffer.isStale, true);
  });

  test('a batch refused as malformed is dropped, not resent forever; later reports still go', async () => {
    Object.assign(sink, { stale: false, applied: 0, calls: 0, refuseNext: 1 });
    sink.events.length = 0;
    const buffer = new ReportBuffer(client, 'w', { ...ref, attemptId: 'a3' }, logDir, logger, () => assert.fail('not stale'));
    buffer.onStatus(snapshot(RunStatus.Running));
    await buffer.settled();
    buffer.onStatus(snapshot(RunStatus.Success));
    await buffer.settled();
    assert.equal(sink.calls, 2);
    assert.deepEqual(sink.events.map((e) => [e.seq, (JSON.parse(e.statusJson ?? '{}') as RunSnapshot).status]), [[2, RunStatus.Success]]);
  });

  // A 30 s window: without the cut at the run's end, this test times out at 15 s.
  test("a burst's reports travel in one call, and the run's end does not wait out the window", { timeout: 15_000 }, async () => {
    Object.assign(sink, { stale: false, applied: 0, calls: 0 });
    sink.events.length = 0;
    const buffer = new ReportBuffer(client, 'w', { ...ref, attemptId: 'a5' }, logDir, logger, () => assert.fail('not stale'), 30_000);
    buffer.onStatus(snapshot(RunStatus.Running));
    buffer.onLog({ stream: 's/stdout', path: `${logDir}/s.out`, offset: 0, data: Buffer.from('out\n') });
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(sink.calls, 0, 'nothing sent while the window is open');
    buffer.onStatus(snapshot(RunStatus.Success));
    await buffer.settled();
    assert.equal(sink.calls, 1);
    assert.deepEqual(sink.events.map((e) => [e.seq, e.body]), [[1, 'statusJson'], [2, 'log'], [3, 'statusJson']]);
  });

  test('after a failover, what the coordinator left behind did not confirm is resent to the next one, in order', async () => {
    const next = new ReportSink();
    await next.start();
    const away = new ReportSink();
    await away.start();
    away.failNext = Number.MAX_SAFE_INTEGER;
    const both = new CoordinatorClient(loadWorkerConfig({ coordinator: `127.0.0.1:${away.port},127.0.0.1:${next.port}` }, {}));
    try {
      assert.equal(both.address, `127.0.0.1:${away.port}`);
      const buffer = new ReportBuffer(both, 'w', { ...ref, attemptId: 'a4' }, logDir, logger, () => assert.fail('not stale'));
      buffer.onStatus(snapshot(RunStatus.Running));
      buffer.onLog({ stream: 's/stdout', path: `${logDir}/s.out`, offset: 0, data: Buffer.from('held\n') });
      while (away.calls === 0) await new Promise((r) => setTimeout(r, 10));
      assert.equal(both.failover(), `127.0.0.1:${next.port}`);
      buffer.onStatus(snapshot(RunStatus.Success));
      await buffer.settled();
      assert.deepEqual(next.events.map((e) => [e.seq, e.body]), [[1, 'statusJson'], [2, 'log'], [3, 'statusJson']]);
      assert.equal(next.events[1]?.log?.data.toString(), 'held\n');
      assert.equal(both.failover(), `127.0.0.1:${away.port}`, 'round robin');
    } finally {
      both.close();
      next.server.forceShutdown();
      away.server.forceShutdown();
    }
  });
});
