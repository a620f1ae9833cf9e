// The deploy files (deploy/, docker-compose.yml) checked against the code they configure,
// without a Docker engine: every environment variable and flag they pass is one the
// coordinator or the worker reads, the image runs the CLI the e2e tests run, and the Grafana
// dashboard asks only for metrics the coordinator exports (checked against a live scrape too).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { ENV_KEYS, loadServerConfig } from '@trellis/coordinator';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';

const ROOT = resolve(import.meta.dirname, '..', '..', '..');
const CLI = join('packages', 'cli', 'dist', 'main.js');
const run = promisify(execFile);

type Json = Record<string, unknown>;

function read(path: string): string {
  return readFileSync(join(ROOT, path), 'utf8');
}

function readYaml(path: string): Json {
  // Compose files use YAML merge keys (`<<: *anchor`), as Docker Compose does.
  const value: unknown = parse(read(path), { merge: true });
  assert.ok(typeof value === 'object' && value !== null && !Array.isArray(value), `${path} is a YAML mapping`);
  return value as Json;
}

function asRecord(value: unknown, what: string): Json {
  assert.ok(typeof value === 'object' && value !== null && !Array.isArray(value), `${what} is a mapping`);
  return value as Json;
}

function asStrings(value: unknown, what: string): string[] {
  assert.ok(Array.isArray(value) && value.every((v): v is string => typeof v === 'string'), `${what} is a list of strings`);
  return value;
}

/** Compose `environment:` as a mapping or as a KEY=value list. */
function environmentOf(service: Json, what: string): Record<string, string> {
  const env = service.environment;
  if (env === undefined) return {};
  if (Array.isArray(env)) {
    return Object.fromEntries(asStrings(env, what).map((line) => {
      const at = line.indexOf('=');
      return at < 0 ? [line, ''] : [line.slice(0, at), line.slice(at + 1)];
    }));
  }
  return Object.fromEntries(Object.entries(asRecord(env, what)).map(([k, v]) => [k, String(v)]));
}

/**
 * Compose interpolation with only the variables in `given` set: `${NAME:-default}` takes its
 * default, `${NAME:?message}` (required) refuses to expand, as `docker compose` does.
 */
function interpolate(value: string, given: Record<string, string> = {}): string {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?-|:\?)([^}]*))?\}/g, (_m, name: string, op: string | undefined, arg: string | undefined) => {
    const set = given[name];
    if (set !== undefined && set !== '') return set;
    if (op === ':?') throw new Error(`required variable ${name} is not set: ${arg ?? ''}`);
    return arg ?? '';
  });
}

/** Published ports: `[address:]published:target` after interpolation. */
function publishedPorts(service: Json, what: string): Array<{ address: string | undefined; published: string; target: string }> {
  return asStrings(service.ports ?? [], what).map((spec) => {
    const parts = interpolate(spec).split(':');
    const target = parts.pop() ?? '';
    const published = parts.pop() ?? '';
    return { address: parts.length > 0 ? parts.join(':') : undefined, published, target };
  });
}

/** The JSON-form CMD of the image's HEALTHCHECK. */
function healthcheckCommand(): string[] {
  const health = dockerfileInstructions(read('deploy/Dockerfile')).filter((i) => i.op === 'HEALTHCHECK').at(-1);
  assert.ok(health !== undefined, 'the image has a HEALTHCHECK');
  const at = health.args.indexOf('CMD ');
  assert.ok(at >= 0, 'HEALTHCHECK ... CMD [...]');
  return asStrings(JSON.parse(health.args.slice(at + 4)), 'HEALTHCHECK CMD');
}

/** The flags `trellis <command> --help` lists. */
async function helpFlags(command: string): Promise<Set<string>> {
  assert.ok(existsSync(join(ROOT, CLI)), `${CLI} is missing: run npm run build first`);
  const { stdout } = await run(process.execPath, [CLI, command, '--help'], { cwd: ROOT });
  return new Set([...stdout.matchAll(/^\s+(?:-h, )?(--[a-z][a-z-]*)/gm)].map((m) => m[1] ?? ''));
}

/** Flags of an argument list; each must be followed by its value (every flag of these commands takes one). */
function flagsOf(args: string[], what: string): string[] {
  const flags: string[] = [];
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] ?? '';
    if (!arg.startsWith('--')) continue;
    const value = args[i + 1];
    assert.ok(value !== undefined && !value.startsWith('--'), `${what}: ${arg} needs a value`);
    flags.push(arg);
    i += 1;
  }
  return flags;
}

/** The SVC_WORKER_* variables packages/worker/src/config.ts reads. */
function workerEnvNames(): Set<string> {
  const names = new Set([...read('packages/worker/src/config.ts').matchAll(/'(SVC_WORKER_[A-Z_]+)'/g)].map((m) => m[1] ?? ''));
  assert.ok(names.has('SVC_WORKER_COORDINATOR') && names.has('SVC_WORKER_TOKEN'), 'found the worker variables in its config module');
  return names;
}

function workerDefaultGraceSec(): number {
  const match = /'SVC_WORKER_SHUTDOWN_GRACE_SEC'\),\s*(\d+)/.exec(read('packages/worker/src/config.ts'));
  assert.ok(match?.[1] !== undefined, 'found the default shutdown grace in the worker config');
  return Number(match[1]);
}

/** Compose durations such as 75s, 1m30s. */
function seconds(duration: unknown): number {
  assert.equal(typeof duration, 'string');
  let total = 0;
  for (const [, n, unit] of (duration as string).matchAll(/(\d+)(h|m|s)/g)) total += Number(n) * (unit === 'h' ? 3600 : unit === 'm' ? 60 : 1);
  return total;
}

// ---- Dockerfile -------------------------------------------------------------------------------

interface Instruction {
  op: string;
  args: string;
}

function dockerfileInstructions(text: string): Instruction[] {
  const joined = text.split('\n').filter((line) => !/^\s*#/.test(line)).join('\n').replace(/\\\n/g, ' ');
  return joined.split('\n').map((line) => line.trim()).filter((line) => line !== '').map((line) => {
    const at = line.search(/\s/);
    return { op: line.slice(0, at).toUpperCase(), args: line.slice(at + 1).trim() };
  });
}

// ---- the metrics the coordinator exports (the other side of the dashboard) ------------------

const SVC_METRICS = new Set([
  'svc_info', 'svc_uptime_seconds', 'svc_scheduler_running', 'svc_dags_total', 'svc_dag_runs_currently_running',
  'svc_dag_runs_queued_total', 'svc_dag_runs_total', 'svc_workers_registered', 'svc_worker_info',
  'svc_worker_heartbeat_timestamp_seconds', 'svc_worker_health_status', 'svc_worker_pollers', 'svc_worker_running_tasks',
  'svc_worker_oldest_running_task_age_seconds', 'svc_queue_depth', 'svc_queue_running', 'svc_queue_oldest_wait_seconds',
  'svc_dispatch_latency_seconds', 'svc_dag_run_duration_seconds', 'svc_http_request_duration_seconds',
]);
const SVC_HISTOGRAMS = new Set(['svc_dispatch_latency_seconds', 'svc_dag_run_duration_seconds', 'svc_http_request_duration_seconds']);

/** prom-client's default metrics (process_*, nodejs_*), by name, with their types. */
async function defaultMetrics(): Promise<Map<string, string>> {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const metrics = await registry.getMetricsAsJSON();
  registry.clear();
  return new Map(metrics.map((m) => [m.name, String(m.type)]));
}

interface Panel {
  title: string;
  type: string;
  datasource?: { uid?: string };
  targets?: Array<{ expr?: string; datasource?: { uid?: string } }>;
  panels?: Panel[];
}

function dashboardPanels(): Panel[] {
  const dashboard = JSON.parse(read('deploy/grafana/dashboards/trellis.json')) as { panels: Panel[] };
  return dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
}

/** Metric names in a PromQL expression (the histogram series suffixes left on). */
function metricNamesIn(expr: string): string[] {
  return [...expr.matchAll(/\b((?:svc|process|nodejs)_[a-z0-9_]+)\b/g)].map((m) => m[1] ?? '');
}

/** The metric a series name belongs to: histogram series lose _bucket/_sum/_count. */
function metricOf(series: string, histograms: Set<string>): string {
  const base = series.replace(/_(bucket|sum|count)$/, '');
  return base !== series && histograms.has(base) ? base : series;
}

/** The aggregation operator whose parentheses hold the text at `at` (`max by (q) (x)` -> max), if any. */
function innermostAggregation(expr: string, at: number): string | undefined {
  let depth = 0;
  for (let i = at - 1; i >= 0; i -= 1) {
    if (expr[i] === ')') depth += 1;
    else if (expr[i] === '(') {
      if (depth > 0) {
        depth -= 1;
        continue;
      }
      const operator = /\b(sum|max|min|avg|count|topk|bottomk|quantile|stddev|stdvar|group)\s*(?:(?:by|without)\s*\([^)]*\)\s*)?$/.exec(expr.slice(0, i));
      if (operator !== null) return operator[1];
    }
  }
  return undefined;
}

async function dashboardMetrics(): Promise<Set<string>> {
  const defaults = await defaultMetrics();
  const histograms = new Set([...SVC_HISTOGRAMS, ...[...defaults].filter(([, type]) => type === 'histogram').map(([name]) => name)]);
  const names = new Set<string>();
  for (const panel of dashboardPanels()) {
    for (const target of panel.targets ?? []) {
      for (const series of metricNamesIn(target.expr ?? '')) names.add(metricOf(series, histograms));
    }
  }
  return names;
}

// ---------------------------------------------------------------------------------------------

describe('deploy files', () => {
  const compose = readYaml('docker-compose.yml');
  const services = asRecord(compose.services, 'services');
  const service = (name: string): Json => asRecord(services[name], `service ${name}`);

  test('docker-compose.yml has postgres, the coordinator, two workers, prometheus and grafana', () => {
    for (const name of ['postgres', 'coordinator', 'worker-a', 'worker-b', 'prometheus', 'grafana']) assert.ok(name in services, `service ${name}`);
    assert.match(String(service('postgres').image), /^postgres:16/);
    assert.match(JSON.stringify(asRecord(service('postgres').healthcheck, 'postgres healthcheck').test), /pg_isready/);
    const dependsOn = asRecord(service('coordinator').depends_on, 'coordinator depends_on');
    assert.deepEqual(dependsOn.postgres, { condition: 'service_healthy' });
    const ports = publishedPorts(service('coordinator'), 'coordinator ports').map((p) => `${p.published}:${p.target}`);
    assert.deepEqual(ports, ['8080:8080', '50051:50051']);
    const volumes = asStrings(service('coordinator').volumes, 'coordinator volumes');
    assert.ok(volumes.some((v) => v.startsWith('./dags:')), 'the DAGs directory is mounted');
  });

  test('every published port is bound to 127.0.0.1 unless PUBLISH_ADDRESS says otherwise', () => {
    let count = 0;
    for (const [name, value] of Object.entries(services)) {
      for (const spec of asStrings(asRecord(value, name).ports ?? [], `${name} ports`)) {
        count += 1;
        assert.match(spec, /^\$\{PUBLISH_ADDRESS:-127\.0\.0\.1\}:\d+:\d+$/, `${name}: ${spec}`);
        assert.match(interpolate(spec), /^127\.0\.0\.1:/);
        assert.match(interpolate(spec, { PUBLISH_ADDRESS: '0.0.0.0' }), /^0\.0\.0\.0:/);
      }
    }
    assert.equal(count, 6, "API, gRPC, the proxy's API and gRPC (profile scaled), Prometheus and Grafana are published");
  });

  test('secrets have no defaults: without SVC_WORKER_TOKEN, SVC_SECRETS_KEY or GRAFANA_ADMIN_PASSWORD compose refuses to start', () => {
    const text = read('docker-compose.yml');
    assert.doesNotMatch(text, /change-me/);
    const required: Array<[string, string, string]> = [
      ['coordinator', 'SVC_WORKER_TOKEN', 'SVC_WORKER_TOKEN'],
      ['coordinator', 'SVC_SECRETS_KEY', 'SVC_SECRETS_KEY'],
      ['worker-a', 'SVC_WORKER_TOKEN', 'SVC_WORKER_TOKEN'],
      ['worker-b', 'SVC_WORKER_TOKEN', 'SVC_WORKER_TOKEN'],
      ['grafana', 'GF_SECURITY_ADMIN_PASSWORD', 'GRAFANA_ADMIN_PASSWORD'],
    ];
    for (const [name, key, variable] of required) {
      const value = environmentOf(service(name), `${name} environment`)[key] ?? '';
      assert.throws(() => interpolate(value), new RegExp(`required variable ${variable}`), `${name}: ${key} without ${variable}`);
      assert.equal(interpolate(value, { [variable]: 's3cret' }), 's3cret');
    }
  });

  test('workers restart on failure a few times only: a refused worker (exit 3) does not loop', () => {
    for (const name of ['worker-a', 'worker-b']) {
      const match = /^on-failure:(\d+)$/.exec(String(service(name).restart));
      assert.ok(match !== null, `${name}: restart is on-failure:N, not ${String(service(name).restart)}`);
      assert.ok(Number(match[1]) >= 1 && Number(match[1]) <= 10, `${name}: a small limit`);
    }
    assert.match(read('packages/cli/src/commands/worker.ts'), /WorkerRefusedError\) \{[\s\S]{0,200}?return 3;/, 'exit 3 is the refused worker');
  });

  test('the trellis services build deploy/Dockerfile from the repository root', () => {
    for (const name of ['coordinator', 'coordinator-2', 'worker-a', 'worker-b']) {
      const build = asRecord(service(name).build, `${name} build`);
      const context = String(build.context);
      assert.equal(resolve(ROOT, context), ROOT, `${name} builds from the repository root`);
      assert.equal(build.dockerfile, 'deploy/Dockerfile');
      assert.ok(existsSync(resolve(ROOT, context, String(build.dockerfile))), 'deploy/Dockerfile exists');
    }
    assert.equal(service('worker-a').image, service('coordinator').image, 'one image for the coordinator and the workers');
  });

  test('profile scaled: a second coordinator like the first (its own id and data volume, no shared volume) behind an nginx proxy for HTTP, SSE and gRPC', () => {
    const profiled = Object.entries(services).filter(([, value]) => asRecord(value, 'service').profiles !== undefined).map(([name]) => name);
    assert.deepEqual(profiled.sort(), ['coordinator-2', 'proxy'], 'everything else runs without the profile');
    for (const name of profiled) assert.deepEqual(service(name).profiles, ['scaled']);
    const first = environmentOf(service('coordinator'), 'coordinator environment');
    const second = environmentOf(service('coordinator-2'), 'coordinator-2 environment');
    assert.deepEqual({ ...second, SVC_COORDINATOR_ID: '', SVC_ALLOWED_HOSTS: '' }, { ...first, SVC_COORDINATOR_ID: '', SVC_ALLOWED_HOSTS: '' }, 'the same settings');
    assert.notEqual(second.SVC_COORDINATOR_ID, first.SVC_COORDINATOR_ID, 'a name of its own on the shared database');
    const dataVolume = (name: string) => asStrings(service(name).volumes, `${name} volumes`).find((v) => v.endsWith(':/app/data'));
    assert.notEqual(dataVolume('coordinator-2'), dataVolume('coordinator'), 'a data directory of its own');
    // Definitions, documents and logs are in the database: the coordinators share no volume, only
    // the host's ./dags, mounted in both as the place to edit DAGs by hand.
    const named = (name: string) => asStrings(service(name).volumes, `${name} volumes`).filter((v) => !v.startsWith('./'));
    assert.deepEqual(named('coordinator').filter((v) => named('coordinator-2').includes(v)), [], 'no named volume shared between coordinators');
    assert.equal(first.SVC_LOG_DIR, undefined, 'run logs are not a directory of their own: the working copies stay in the data volume');
    assert.equal(publishedPorts(service('coordinator-2'), 'coordinator-2 ports').length, 0, 'reached through the proxy');

    const proxy = service('proxy');
    assert.match(String(proxy.image), /^nginx:/);
    assert.deepEqual(asStrings(proxy.volumes, 'proxy volumes'), ['./deploy/nginx/trellis.conf:/etc/nginx/nginx.conf:ro']);
    assert.deepEqual(publishedPorts(proxy, 'proxy ports').map((p) => `${p.published}:${p.target}`), ['8000:8080', '50050:50051']);
    assert.deepEqual(Object.keys(asRecord(proxy.depends_on, 'proxy depends_on')).sort(), ['coordinator', 'coordinator-2']);
    const nginx = read('deploy/nginx/trellis.conf');
    const upstream = (name: string) => [...(new RegExp(`upstream ${name} \\{([^}]*)\\}`).exec(nginx)?.[1] ?? '').matchAll(/server (\S+)/g)].map((m) => m[1]);
    assert.deepEqual(upstream('trellis_api'), ['coordinator:8080', 'coordinator-2:8080']);
    assert.deepEqual(upstream('trellis_grpc'), ['coordinator:50051', 'coordinator-2:50051']);
    assert.match(nginx, /listen 8080;[\s\S]*proxy_pass http:\/\/trellis_api;[\s\S]*proxy_buffering off;/, 'HTTP with server-sent events unbuffered');
    assert.match(nginx, /listen 50051 http2;[\s\S]*grpc_pass grpc:\/\/trellis_grpc;/, 'gRPC over HTTP/2');
  });

  test('the coordinator gets only variables the coordinator reads, with values its config accepts', () => {
    const env = environmentOf(service('coordinator'), 'coordinator environment');
    for (const name of Object.keys(env)) {
      if (name.startsWith('SVC_') || name === 'DATABASE_URL') assert.ok(name in ENV_KEYS, `${name} is a key of ENV_KEYS`);
    }
    for (const name of ['DATABASE_URL', 'SVC_HOST', 'SVC_GRPC_HOST', 'SVC_WORKER_TOKEN']) assert.ok(name in env, `coordinator sets ${name}`);
    assert.equal(env.SVC_HOST, '0.0.0.0');
    assert.equal(env.SVC_GRPC_HOST, '0.0.0.0');
    const secretsKey = Buffer.alloc(32, 9).toString('base64');
    const expanded = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, interpolate(v, { SVC_WORKER_TOKEN: 'from-the-env-file', SVC_SECRETS_KEY: secretsKey })]));
    const config = loadServerConfig({ env: expanded, cwd: '/app' });
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.grpcPort, 50051, 'the published gRPC port is the one it listens on');
    assert.equal(config.port, 8080, 'the published HTTP port is the one it listens on');
    assert.match(config.databaseUrl ?? '', /@postgres:5432\//);
    assert.ok(config.workerToken !== undefined, 'a worker token, required when gRPC is not on loopback');
    assert.equal(config.secretKeys.current, secretsKey, 'secrets can be stored: the database is a server, so no key is generated');
    assert.equal(config.auth.mode, 'builtin', 'an API on 0.0.0.0 never runs with auth off');
    const dagsMount = asStrings(service('coordinator').volumes, 'volumes').find((v) => v.startsWith('./dags:'));
    assert.equal(dagsMount?.split(':')[1], config.dagsDir, 'the DAGs are mounted where the coordinator reads them');
  });

  test('the workers get only SVC_WORKER_* variables the worker reads, the same token, and flags `trellis worker --help` lists', async () => {
    const known = workerEnvNames();
    const flags = await helpFlags('worker');
    assert.ok(flags.has('--coordinator') && flags.has('--labels'), 'parsed the worker help');
    const coordinatorToken = environmentOf(service('coordinator'), 'coordinator environment').SVC_WORKER_TOKEN;
    assert.match(coordinatorToken ?? '', /^\$\{SVC_WORKER_TOKEN:\?[^}]+\}$/, 'the token comes from SVC_WORKER_TOKEN, which has no default');
    const labels = new Set<string>();
    for (const name of ['worker-a', 'worker-b']) {
      const env = environmentOf(service(name), `${name} environment`);
      for (const key of Object.keys(env)) {
        if (key.startsWith('SVC_')) assert.ok(known.has(key), `${name}: ${key} is read by the worker (packages/worker/src/config.ts)`);
      }
      assert.equal(env.SVC_WORKER_TOKEN, coordinatorToken, `${name} presents the coordinator's token`);
      const command = asStrings(service(name).command, `${name} command`);
      assert.equal(command[0], 'worker');
      const used = flagsOf(command.slice(1), `${name} command`);
      for (const flag of used) assert.ok(flags.has(flag), `${name}: ${flag} is a flag of trellis worker`);
      assert.ok(!command.includes('--coordinator'), `${name}: the coordinators come from SVC_WORKER_COORDINATOR`);
      const coordinators = env.SVC_WORKER_COORDINATOR ?? '';
      assert.equal(interpolate(coordinators), 'coordinator:50051');
      assert.equal(interpolate(coordinators, { WORKER_COORDINATORS: 'coordinator:50051,coordinator-2:50051' }), 'coordinator:50051,coordinator-2:50051');
      const labelArg = command[command.indexOf('--labels') + 1];
      assert.ok(command.includes('--labels') && labelArg !== undefined, `${name} has labels`);
      labels.add(labelArg);
      assert.ok(seconds(service(name).stop_grace_period) > workerDefaultGraceSec(), `${name}: docker stops it after the worker's shutdown grace`);
    }
    assert.equal(labels.size, 2, 'the two workers have different labels');
  });

  test('the image runs the CLI the e2e tests run: `trellis server` by default, under tini, as a non-root user', async () => {
    const instructions = dockerfileInstructions(read('deploy/Dockerfile'));
    const stages = instructions.filter((i) => i.op === 'FROM');
    assert.ok(stages.length >= 2, 'multi-stage');
    const finalStage = instructions.slice(instructions.lastIndexOf(stages.at(-1) as Instruction));
    const last = (op: string): string => {
      const found = finalStage.filter((i) => i.op === op).at(-1);
      assert.ok(found !== undefined, `the runtime stage has ${op}`);
      return found.args;
    };
    const entrypoint = asStrings(JSON.parse(last('ENTRYPOINT')), 'ENTRYPOINT');
    assert.deepEqual(entrypoint, ['tini', '--', 'node', `/app/${CLI}`]);
    assert.match(read('test-e2e/support/cluster.ts'), /join\(ROOT, 'packages', 'cli', 'dist', 'main\.js'\)/, 'the e2e tests run the same file');
    const bin = (JSON.parse(read('packages/cli/package.json')) as { bin: Record<string, string> }).bin.trellis;
    // The bin is a shim npm can link before the first build; it runs the compiled CLI.
    assert.match(read(join('packages/cli', bin ?? '')), /new URL\('\.\.\/dist\/main\.js', import\.meta\.url\)/, 'it is the `trellis` command');
    assert.equal(join('packages/cli', bin ?? '', '..', '..', 'dist', 'main.js'), CLI);
    const cmd = asStrings(JSON.parse(last('CMD')), 'CMD');
    assert.equal(cmd[0], 'server');
    const serverFlags = await helpFlags('server');
    for (const flag of flagsOf(cmd.slice(1), 'CMD')) assert.ok(serverFlags.has(flag), `${flag} is a flag of trellis server`);
    assert.match(last('HEALTHCHECK'), /fetch\('http:\/\/127\.0\.0\.1:.*'\/health'\)/, 'asks /health (under the configured paths: see the live test)');
    assert.doesNotMatch(last('USER'), /^(root|0)(:|$)/);
    assert.ok(finalStage.some((i) => i.op === 'RUN' && /apt-get install .*\btini\b/.test(i.args)), 'tini is installed');
    assert.ok(finalStage.some((i) => i.op === 'RUN' && /npm ci\b.*--omit=dev/.test(i.args)), 'production dependencies only');
    // Every workspace: its manifest (for npm ci) and its dist/ reach the runtime stage; so do the protos.
    const copies = finalStage.filter((i) => i.op === 'COPY').map((i) => i.args);
    const workspaces = (JSON.parse(read('package.json')) as { workspaces: string[] }).workspaces;
    for (const ws of workspaces) {
      assert.ok(copies.some((c) => c.includes(`${ws}/package.json`)), `${ws}/package.json is copied`);
      assert.ok(copies.some((c) => c.startsWith('--from=') && c.includes(`/app/${ws}/dist`)), `${ws}/dist is copied from the build stage`);
    }
    assert.ok(copies.some((c) => c.startsWith('--from=') && /\/app\/protos\s+\.\/protos$/.test(c)), 'protos/ keeps its place beside packages/');
    assert.ok(existsSync(join(ROOT, 'protos/coordinator/v1/coordinator.proto')));
  });

  test('.dockerignore leaves out build output and state, never what the build copies', () => {
    const patterns = read('.dockerignore').split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
    for (const p of ['**/node_modules', '**/dist', 'data', '.git']) assert.ok(patterns.includes(p), `.dockerignore has ${p}`);
    for (const needed of ['package.json', 'package-lock.json', 'tsconfig.base.json', 'packages', 'protos']) {
      assert.ok(!patterns.some((p) => p === needed || p === `${needed}/` || p === `/${needed}`), `${needed} reaches the build`);
    }
  });

  test('prometheus scrapes each coordinator at /api/v1/metrics, named by its instance label, never the proxy', () => {
    const config = readYaml('deploy/prometheus/prometheus.yml');
    type Job = { metrics_path?: string; dns_sd_configs?: Array<{ names: string[]; type: string; port: number }>; relabel_configs?: Array<{ source_labels?: string[]; target_label: string }> };
    const jobs = config.scrape_configs as Job[];
    const job = jobs.find((j) => j.dns_sd_configs?.some((d) => d.names.includes('coordinator')));
    assert.ok(job !== undefined, 'a job scrapes the coordinator');
    assert.deepEqual(job.dns_sd_configs, [{ names: ['coordinator', 'coordinator-2'], type: 'A', port: 8080, refresh_interval: '15s' }]);
    assert.ok(job.relabel_configs?.some((r) => r.target_label === 'instance' && r.source_labels?.[0] === '__meta_dns_name'), 'instance is the service name');
    assert.equal(job.metrics_path, '/api/v1/metrics');
    const volumes = asStrings(service('prometheus').volumes, 'prometheus volumes');
    assert.ok(volumes.some((v) => v.startsWith('./deploy/prometheus/prometheus.yml:/etc/prometheus/prometheus.yml')));
  });

  test('grafana provisions the Prometheus datasource and the dashboard folder compose mounts', () => {
    const datasources = readYaml('deploy/grafana/provisioning/datasources/prometheus.yml').datasources as Array<{ type: string; uid: string; url: string }>;
    const prometheus = datasources.find((d) => d.type === 'prometheus');
    assert.ok(prometheus !== undefined);
    assert.equal(prometheus.url, 'http://prometheus:9090');
    const providers = readYaml('deploy/grafana/provisioning/dashboards/trellis.yml').providers as Array<{ options: { path: string } }>;
    const volumes = asStrings(service('grafana').volumes, 'grafana volumes');
    assert.ok(volumes.some((v) => v.startsWith('./deploy/grafana/provisioning:/etc/grafana/provisioning')));
    const dashboardsMount = volumes.find((v) => v.startsWith('./deploy/grafana/dashboards:'));
    assert.equal(dashboardsMount?.split(':')[1], providers[0]?.options.path, 'the provider reads the mounted dashboards');
    const dashboard = JSON.parse(read('deploy/grafana/dashboards/trellis.json')) as { schemaVersion: number; uid: string };
    assert.ok(dashboard.schemaVersion >= 36);
    for (const panel of dashboardPanels().filter((p) => p.type !== 'row')) {
      assert.equal(panel.datasource?.uid, prometheus.uid, `panel "${panel.title}" uses the provisioned datasource`);
      assert.ok((panel.targets ?? []).length > 0 && panel.targets?.every((t) => (t.expr ?? '') !== ''), `panel "${panel.title}" has queries`);
    }
    assert.match(String(service('grafana').image), /^grafana\/grafana/);
    assert.deepEqual(publishedPorts(service('grafana'), 'grafana ports').map((p) => `${p.published}:${p.target}`), ['3000:3000']);
  });

  test('grafana shows per-coordinator metrics (process, API, dispatch, uptime) per coordinator, chosen by an instance variable', () => {
    const dashboard = JSON.parse(read('deploy/grafana/dashboards/trellis.json')) as { templating: { list: Array<{ name: string; definition: string }> } };
    const variable = dashboard.templating.list.find((v) => v.name === 'instance');
    assert.equal(variable?.definition, 'label_values(up{job="trellis-coordinator"}, instance)');
    const perCoordinator = /\b(process_|nodejs_|svc_http_|svc_dispatch_|svc_uptime_)/;
    let checked = 0;
    for (const panel of dashboardPanels()) {
      for (const expr of (panel.targets ?? []).map((t) => t.expr ?? '').filter((e) => perCoordinator.test(e))) {
        checked += 1;
        assert.match(expr, /instance=~"\$instance"/, `panel "${panel.title}" follows the coordinator variable`);
        const grouped = /\b(sum|max|min|avg) by \(([^)]*)\)/.exec(expr);
        if (grouped !== null) assert.ok(grouped[2]?.split(',').map((l) => l.trim()).includes('instance'), `panel "${panel.title}" keeps one series per coordinator`);
      }
    }
    assert.ok(checked >= 8, `found the per-coordinator queries (${checked})`);
  });

  test('every dashboard query names only metrics the coordinator exports', async () => {
    const defaults = await defaultMetrics();
    const names = await dashboardMetrics();
    assert.ok(names.size >= 15, 'found the dashboard metrics');
    const unknown = [...names].filter((name) => !SVC_METRICS.has(name) && !defaults.has(name)).sort();
    assert.deepEqual(unknown, [], `metrics the coordinator does not export: ${unknown.join(', ')}`);
  });

  test('the systemd unit runs `trellis worker` from worker.env, stopping after the shutdown grace', () => {
    const unit = read('deploy/systemd/trellis-worker.service');
    const setting = (key: string): string[] => [...unit.matchAll(new RegExp(`^${key}=(.*)$`, 'gm'))].map((m) => m[1] ?? '');
    assert.deepEqual(setting('User'), ['trellis']);
    assert.deepEqual(setting('EnvironmentFile'), ['/etc/trellis/worker.env']);
    assert.match(setting('ExecStart')[0] ?? '', new RegExp(`node \\S*/${CLI.replace(/\./g, '\\.')} worker$`));
    assert.deepEqual(setting('Restart'), ['on-failure']);
    assert.deepEqual(setting('KillSignal'), ['SIGTERM']);
    assert.ok(Number(setting('TimeoutStopSec')[0]) > workerDefaultGraceSec(), 'TimeoutStopSec is longer than the worker shutdown grace');
    const known = workerEnvNames();
    for (const [, name] of setting('Environment').map((e) => /^([A-Z_]+)=/.exec(e) ?? [])) {
      if (name?.startsWith('SVC_') === true) assert.ok(known.has(name), `${name} is read by the worker`);
    }
    const example = read('deploy/systemd/worker.env.example');
    const keys = [...example.matchAll(/^#?(SVC_[A-Z_]+)=/gm)].map((m) => m[1] ?? '');
    for (const key of keys) assert.ok(known.has(key), `worker.env.example: ${key} is read by the worker`);
    for (const key of ['SVC_WORKER_COORDINATOR', 'SVC_WORKER_TOKEN', 'SVC_WORKER_LABELS']) assert.match(example, new RegExp(`^${key}=`, 'm'));
  });
});

describe('the coordinator exports what the dashboard asks for', () => {
  let t: TestCoordinator;
  let mounted: TestCoordinator;
  before(async () => {
    t = await startTestCoordinator('deploy_metrics', {});
    mounted = await startTestCoordinator('deploy_mounted', {}, { basePath: '/mnt', apiBasePath: '/api/v2' });
  });
  after(async () => {
    await t.stop();
    await mounted.stop();
  });

  test('the image health check finds /health under the configured base path', async () => {
    const [program, flag, script] = healthcheckCommand();
    assert.deepEqual([program, flag], ['node', '-e']);
    const port = new URL(mounted.coordinator.apiUrl).port;
    const check = async (env: Record<string, string>) => {
      try {
        await run(process.execPath, ['-e', script ?? ''], { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 10_000 });
        return 0;
      } catch (error) {
        return (error as { code?: number }).code ?? -1;
      }
    };
    assert.equal(await check({ SVC_PORT: port, SVC_BASE_PATH: '/mnt', SVC_API_BASE_PATH: '/api/v2' }), 0, 'healthy where the server is mounted');
    assert.equal(await check({ SVC_PORT: port }), 1, 'not healthy at the default path, where nothing is served');
  });

  test('the dashboard reads the leader-only database gauges with max(), never a sum over coordinators', async () => {
    const text = await (await fetch(`${t.coordinator.apiUrl}/metrics`)).text();
    const leaderOnly = new Set([...text.matchAll(/^# HELP (\S+) .*\(exported by the scheduler leader only\)$/gm)].map((m) => m[1] ?? ''));
    assert.ok(leaderOnly.has('svc_dag_runs_queued_total') && leaderOnly.has('svc_worker_health_status'), 'found the leader-only gauges');
    let checked = 0;
    for (const panel of dashboardPanels()) {
      for (const expr of (panel.targets ?? []).map((target) => target.expr ?? '')) {
        for (const match of expr.matchAll(/\b(svc_[a-z0-9_]+)\b/g)) {
          if (!leaderOnly.has(match[1] ?? '')) continue;
          checked += 1;
          assert.equal(innermostAggregation(expr, match.index), 'max', `panel "${panel.title}": ${expr}`);
        }
      }
    }
    assert.ok(checked >= 10, `checked ${checked} uses`);
  });

  test('GET /metrics has a # HELP line for every dashboard metric', async () => {
    const res = await fetch(`${t.coordinator.apiUrl}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    const text = await res.text();
    const helped = new Set([...text.matchAll(/^# HELP (\S+) /gm)].map((m) => m[1] ?? ''));
    const missing = [...(await dashboardMetrics())].filter((name) => !helped.has(name)).sort();
    assert.deepEqual(missing, [], `metrics the dashboard uses but the coordinator does not export: ${missing.join(', ')}`);
  });
});
