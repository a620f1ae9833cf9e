// The database goes away under a running coordinator (a PostgreSQL cluster of this test's own,
// stopped and started again): requests answer 503 service_unavailable instead of 500, /health
// says unhealthy (503, with the reason) until the database answers again, workers are told
// UNAVAILABLE so they retry, and everything works again once it is back.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openDatabase, type Db } from '@trellis/store';
import { startThrowawayCluster, type ThrowawayCluster } from '@trellis/store/testing';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';
import { rawWorkerClient } from './support/worker-client.js';

let cluster: ThrowawayCluster;
let db: Db;
let t: TestCoordinator;
let worker: ReturnType<typeof rawWorkerClient>;

before(async () => {
  cluster = await startThrowawayCluster();
  db = await openDatabase({ databaseUrl: cluster.url });
  t = await startTestCoordinator('database_unavailable', { hello: 'steps:\n  - echo hello\n', slow: 'steps:\n  - sleep 30\n' }, {}, { db });
  assert.ok(t.coordinator.grpcAddress);
  worker = rawWorkerClient(t.coordinator.grpcAddress);
});

after(async () => {
  worker.close();
  await t.stop();
  await db.close().catch(() => undefined);
  await cluster.destroy();
});

async function waitForStatus(path: string, status: number, timeoutMs: number): Promise<{ status: number; json: Record<string, unknown> }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await t.call('GET', path);
    if (answer.status === status || Date.now() > deadline) return answer;
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('the database is unreachable', () => {
  test('while it is up, /health is healthy and requests work', async () => {
    const health = await t.call('GET', '/health');
    assert.equal(health.status, 200);
    assert.equal(health.json.status, 'healthy');
    assert.equal((await t.call('GET', '/dag-runs')).status, 200);
  });

  test('while it is down: /health answers 503 unhealthy with the reason, and requests 503 service_unavailable', async () => {
    await cluster.stop();
    // The answer is cached for a second at most.
    const health = await waitForStatus('/health', 503, 5000);
    assert.equal(health.status, 503);
    assert.deepEqual(Object.keys(health.json).sort(), ['error', 'status', 'timestamp', 'uptime', 'version']);
    assert.equal(health.json.status, 'unhealthy');
    assert.match(String(health.json.error), /^the database is unreachable: /);
    for (const [method, path, body] of [['GET', '/dag-runs'], ['GET', '/dag-runs/hello/nope'], ['POST', '/dags/hello/start', {}]] as const) {
      const res = body === undefined ? await t.call(method, path) : await t.call(method, path, body);
      assert.equal(res.status, 503, `${method} ${path}: ${JSON.stringify(res.json)}`);
      assert.equal(res.json.code, 'service_unavailable');
      assert.match(String(res.json.message), /database is unreachable/);
    }
    // Workers are told to retry, not that the coordinator failed.
    await assert.rejects(
      worker.call('Register', { workerId: 'w-db', labels: {}, pollers: 1, hostname: 'h', version: 'test', held: [], listsHeld: true }),
      (error: { code: number }) => error.code === 14,
    );
    // Still unhealthy a while later: /health does not flip back on its own.
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal((await t.call('GET', '/health')).status, 503);
  });

  test('once it answers again, /health is healthy and requests work', async () => {
    await cluster.start();
    const health = await waitForStatus('/health', 200, 10_000);
    assert.equal(health.status, 200, JSON.stringify(health.json));
    assert.equal(health.json.status, 'healthy');
    const started = await t.call('POST', '/dags/hello/start', { dagRunId: 'after-outage' });
    assert.equal(started.status, 200, JSON.stringify(started.json));
    const registered = await worker.call<{ heartbeatIntervalMs: number }>('Register', { workerId: 'w-db', labels: {}, pollers: 1, hostname: 'h', version: 'test', held: [], listsHeld: true });
    assert.ok(registered.heartbeatIntervalMs > 0);
  });

  test('a shutdown while it is down does not wait for it: what a local run could not write is dropped, not retried for minutes', async () => {
    const started = await t.call('POST', '/dags/slow/start', { dagRunId: 'cut-off' });
    assert.equal(started.status, 200, JSON.stringify(started.json));
    await t.waitForRunStatus('slow', 'cut-off', [1]);
    await cluster.stop();
    const stopping = Date.now();
    // No grace: the run is stopped at once, and its last report fails to be written.
    await t.stop();
    assert.ok(Date.now() - stopping < 20_000, `the coordinator stopped ${Date.now() - stopping} ms after it was told to`);
  });
});
