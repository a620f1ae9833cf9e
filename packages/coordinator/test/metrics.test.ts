import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';
import { rawWorkerClient } from './support/worker-client.js';

let t: TestCoordinator;
let worker: ReturnType<typeof rawWorkerClient>;

/** Value of one sample line, e.g. `svc_workers_registered` or `svc_worker_pollers{worker_id="a",state="total"}`. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const match = /^([a-z_]+)(\{.*\})? (\S+)$/.exec(line);
    if (match?.[1] !== name) continue;
    const present = Object.entries(labels).every(([k, v]) => (match[2] ?? '').includes(`${k}="${v}"`));
    if (present) return Number(match[3]);
  }
  return undefined;
}

before(async () => {
  t = await startTestCoordinator('metrics', { quick: 'steps:\n  - "true"\n', remote: 'worker_selector:\n  pool: far\nsteps:\n  - "true"\n' });
  worker = rawWorkerClient(t.coordinator.grpcAddress ?? '');
  for (const [id, pool] of [['worker-1', 'far'], ['worker-2', 'near']] as const) {
    await worker.call('Register', { workerId: id, labels: { pool }, pollers: 3, hostname: `host-${id}`, version: 'test' });
  }
  const running = [{ ref: { dagName: 'remote', dagRunId: 'x', attemptId: 'a' }, startedAt: new Date(Date.now() - 7000).toISOString(), rootDagRunName: 'remote', rootDagRunId: 'x', parentDagRunName: '', parentDagRunId: '' }];
  await worker.call('Heartbeat', { workerId: 'worker-1', running, pollersTotal: 3, pollersBusy: 1 });
  await worker.call('Heartbeat', { workerId: 'worker-2', running: [], pollersTotal: 3, pollersBusy: 0 });
  await t.call('POST', '/dags/quick/start', { dagRunId: 'done-1' });
  for (let i = 0; i < 50; i += 1) {
    const run = (await t.call('GET', '/dag-runs/quick/done-1')).json.dagRun as { status: number };
    if (run.status === 4) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  await t.call('POST', '/dags/remote/enqueue', { dagRunId: 'waiting-1' });
});

after(async () => {
  worker.close();
  await t.stop();
});

describe('GET /metrics', () => {
  test('every contract metric is there with sane values, beside runtime, queue, dispatch and HTTP metrics', async () => {
    const res = await fetch(`${t.coordinator.apiUrl}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    const text = await res.text();
    assert.equal(sample(text, 'svc_info', { version: '0.1.0' }), 1);
    assert.ok((sample(text, 'svc_uptime_seconds') ?? -1) >= 0);
    assert.equal(sample(text, 'svc_scheduler_running'), 1, 'the only coordinator leads the scheduler');
    assert.equal(sample(text, 'svc_dags_total'), 2);
    assert.equal(sample(text, 'svc_dag_runs_currently_running'), 0);
    assert.equal(sample(text, 'svc_dag_runs_queued_total'), 1);
    assert.equal(sample(text, 'svc_dag_runs_total', { status: 'succeeded' }), 1);
    assert.equal(sample(text, 'svc_workers_registered'), 2);
    assert.equal(sample(text, 'svc_worker_info', { worker_id: 'worker-1', hostname: 'host-worker-1', labels: 'pool=far' }), 1);
    const heartbeat = sample(text, 'svc_worker_heartbeat_timestamp_seconds', { worker_id: 'worker-2' }) ?? 0;
    assert.ok(Math.abs(heartbeat - Date.now() / 1000) < 30, `heartbeat ${heartbeat}`);
    assert.equal(sample(text, 'svc_worker_health_status', { worker_id: 'worker-1', status: 'healthy' }), 1);
    assert.equal(sample(text, 'svc_worker_health_status', { worker_id: 'worker-1', status: 'unhealthy' }), 0);
    assert.equal(sample(text, 'svc_worker_pollers', { worker_id: 'worker-1', state: 'busy' }), 1);
    assert.equal(sample(text, 'svc_worker_running_tasks', { worker_id: 'worker-1' }), 1);
    assert.ok((sample(text, 'svc_worker_oldest_running_task_age_seconds', { worker_id: 'worker-1' }) ?? 0) >= 6);
    assert.equal(sample(text, 'svc_worker_oldest_running_task_age_seconds', { worker_id: 'worker-2' }), 0);
    assert.equal(sample(text, 'svc_queue_depth', { queue: 'remote' }), 1);
    assert.ok((sample(text, 'svc_queue_oldest_wait_seconds', { queue: 'remote' }) ?? -1) >= 0);
    assert.equal(sample(text, 'svc_dispatch_latency_seconds_count'), 1);
    assert.equal(sample(text, 'svc_dag_run_duration_seconds_count', { dag: 'quick' }), 1);
    assert.ok((sample(text, 'svc_http_request_duration_seconds_count', { method: 'POST', route: '/dags/{fileName}/start', status: '200' }) ?? 0) >= 1);
    assert.ok(sample(text, 'process_resident_memory_bytes') !== undefined);
    assert.ok(sample(text, 'nodejs_eventloop_lag_seconds') !== undefined);
  });
});

describe('GET /services/resources/history', () => {
  test('CPU, memory, disk and load series within the asked duration; bad durations are 400', async () => {
    const { status, json } = await t.call('GET', '/services/resources/history?duration=30m');
    assert.equal(status, 200);
    const body = json as { intervalSeconds: number; cpu: Array<{ timestamp: string; value: number }>; memory: Array<{ value: number }>; disk: Array<{ value: number }>; load: Array<{ value: number }> };
    assert.equal(body.intervalSeconds, 5);
    assert.ok(body.cpu.length >= 1);
    assert.equal(body.memory.length, body.cpu.length);
    assert.ok(body.memory.every((m) => m.value > 0 && m.value <= 100));
    assert.ok(body.disk.every((d) => d.value >= 0 && d.value <= 100));
    assert.ok(body.load.every((l) => l.value >= 0));
    assert.ok(Date.now() - Date.parse(body.cpu[0]?.timestamp ?? '') < 30 * 60 * 1000);
    for (const bad of ['soon', '25h', '-5m']) {
      const res = await t.call('GET', `/services/resources/history?duration=${bad}`);
      assert.equal(res.status, 400, bad);
      assert.equal(res.json.code, 'bad_request');
    }
    assert.equal((await t.call('GET', '/services/resources/history')).status, 200, 'default: the last hour');
  });
});
