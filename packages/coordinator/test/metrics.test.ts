import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
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

/** Gauges whose `_total` names the contract fixes (promtool would have counters only end so). */
const CONTRACT_TOTALS = new Set(['svc_dags_total', 'svc_dag_runs_total', 'svc_dag_runs_queued_total']);

/** Name parts that are not base units (seconds, bytes, meters, grams, ...): other times, bits, SI-prefixed units. */
const NON_BASE_UNIT = /^(minutes|hours|days|weeks|bits|(pico|nano|micro|milli|centi|kilo|mega|giga|tera|peta)(seconds|bytes|meters|grams))$/;
const UNIT_ABBREVIATIONS = ['s', 'ms', 'us', 'ns', 'sec', 'b', 'kb', 'mb', 'gb', 'tb', 'pb', 'm', 'h', 'd'];
const CAMEL = /[a-z][A-Z]/;

/**
 * A sample value as Prometheus parses it (Go's ParseFloat): a number, +Inf/-Inf, or NaN in any
 * letter case. prom-client writes `Nan` for the event-loop lag mean before its first sample.
 */
function isSampleValue(value: string): boolean {
  if (/^[+-]?(inf|infinity|nan)$/i.test(value)) return true;
  return value !== '' && !Number.isNaN(Number(value));
}

/**
 * promtool's lint rules (`promtool check metrics`), for machines without promtool: parse the
 * text format, then the naming rules, as `<metric> <problem>` lines in promtool's words.
 */
function lintExposition(text: string): string[] {
  const problems: string[] = [];
  const types = new Map<string, string>();
  const helped = new Set<string>();
  const seen = new Set<string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const meta = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
    if (meta !== null) {
      if (meta[1] === 'HELP' && meta[3] !== '') helped.add(meta[2] ?? '');
      if (meta[1] === 'TYPE') types.set(meta[2] ?? '', meta[3] ?? '');
      continue;
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*\})? (\S+)( \d+)?$/.exec(line);
    if (sample === null || !isSampleValue(sample[3] ?? '')) {
      problems.push(`text format parsing error: ${line}`);
      continue;
    }
    const series = `${sample[1]}${sample[2] ?? ''}`;
    if (seen.has(series)) problems.push(`${series} duplicate sample`);
    seen.add(series);
    const family = [sample[1] ?? '', (sample[1] ?? '').replace(/_(bucket|sum|count)$/, '')].find((name) => types.has(name));
    if (family === undefined) problems.push(`${sample[1]} sample without a # TYPE line`);
    for (const [, label] of (sample[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="/g)) {
      if (CAMEL.test(label ?? '')) problems.push(`${family} label names should be written in 'snake_case' not 'camelCase'`);
      if (label === 'le' && types.get(family ?? '') !== 'histogram') problems.push(`${family} non-histogram metrics should not have "le" label`);
      if (label === 'quantile' && types.get(family ?? '') !== 'summary') problems.push(`${family} non-summary metrics should not have "quantile" label`);
    }
  }
  for (const [name, type] of types) {
    if (!helped.has(name)) problems.push(`${name} no help text`);
    if (type === 'counter' && !name.endsWith('_total')) problems.push(`${name} counter metrics should have "_total" suffix`);
    if (type !== 'counter' && name.endsWith('_total')) problems.push(`${name} non-counter metrics should not have "_total" suffix`);
    if (!['histogram', 'summary'].includes(type) && /_(bucket|sum|count)$/.test(name)) problems.push(`${name} non-histogram and non-summary metrics should not have "${/_(\w+)$/.exec(name)?.[1]}" suffix`);
    if (name.includes(':')) problems.push(`${name} metric names should not contain ':'`);
    if (CAMEL.test(name)) problems.push(`${name} metric names should be written in 'snake_case' not 'camelCase'`);
    if (name.split('_').includes(type)) problems.push(`${name} metric name should not include type '${type}'`);
    for (const part of name.split('_').filter((p) => NON_BASE_UNIT.test(p))) problems.push(`${name} use a base unit instead of "${part}"`);
    if (name.split('_').some((part) => UNIT_ABBREVIATIONS.includes(part))) problems.push(`${name} metric names should not contain abbreviated units`);
  }
  return problems;
}

/** promtool's problems with the text, or undefined when it is not installed. */
function promtoolProblems(text: string): string[] | undefined {
  const result = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  if (result.error !== undefined && 'code' in result.error && result.error.code === 'ENOENT') return undefined;
  // 0: clean; 3: lint problems, one a line; anything else (1: unparsable) is a problem itself.
  if (result.status !== 0 && result.status !== 3) return [`promtool exited ${result.status}: ${result.stdout}${result.stderr}`];
  return `${result.stdout}${result.stderr}`.split('\n').filter((line) => line.trim() !== '');
}

describe('the exposition format', () => {
  test('promtool check metrics (or, without promtool, its rules) finds nothing but the names the contract fixes', async (ctx) => {
    const text = await (await fetch(`${t.coordinator.apiUrl}/metrics`)).text();
    const notFixed = (problem: string) => !(CONTRACT_TOTALS.has(problem.split(' ')[0] ?? '') && problem.includes('non-counter metrics should not have "_total" suffix'));
    const promtool = promtoolProblems(text);
    if (promtool === undefined) ctx.diagnostic('promtool is not installed (Debian package prometheus): checked with the same rules in this file only');
    else assert.deepEqual(promtool.filter(notFixed), [], 'promtool');
    const own = lintExposition(text);
    assert.deepEqual(own.filter(notFixed), [], 'lint rules');
    assert.deepEqual(own.filter((p) => !notFixed(p)).map((p) => p.split(' ')[0]).sort(), [...CONTRACT_TOTALS].sort(), 'the contract names are the only exceptions');
    if (promtool !== undefined) assert.deepEqual(promtool.filter((p) => !notFixed(p)).sort(), own.filter((p) => !notFixed(p)).sort(), 'promtool and the rules here agree');
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
