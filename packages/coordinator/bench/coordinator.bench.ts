// Coordinator API on a realistic history (1,000 DAG files, 100,000 runs in PostgreSQL): read
// latency over loopback HTTP, and run throughput through the API against the bare engine.
//   npm run bench -w packages/coordinator
// PostgreSQL: TRELLIS_BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test; the
// benchmark works in a schema of its own and drops it at the end.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadDag, toError, type Dag } from '@trellis/core';
import { runDag, type RunReporter } from '@trellis/engine';
import { openBenchDatabase, sampleRuns, seedBenchRuns, type BenchDag, type BenchDatabase } from '@trellis/store/testing';
import { createSilentLogger, loadServerConfig, startCoordinator, type Coordinator } from '@trellis/coordinator';
import { benchDag, percentile } from './bench-dags.js';

const DATABASE_URL = process.env.TRELLIS_BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const DAG_COUNT = 1_000;
const RUN_COUNT = 100_000;
const SEED_CHUNK = 20_000;
const STARTUP_SETTLE_MS = 2_000;
const WARMUP_REQUESTS = 50;
const MEASURED_REQUESTS = 300;
const LATENCY_TARGET_MS = 25;
const ROUNDS = 5;
// As the engine benchmark: 300 one-step runs, 8 at a time.
const THROUGHPUT_RUNS = 300;
const PARALLELISM = 8;
const POSTERS = 4;
// Polls share the server's one thread with the runs: coarse enough to cost little, and a
// 50 ms late finish is under 2% of a round.
const POLL_MS = 50;
const SETTLE_TIMEOUT_MS = 120_000;
const THROUGHPUT_TARGET = 0.5;
// DAG-local queues admit one run at a time; a global queue lets the API run PARALLELISM at once.
const QUEUE = 'bench';
const ONE_STEP = 'steps:\n  - {name: s, command: "true"}\n';

const nullReporter: RunReporter = { onStatus: () => undefined, onLog: () => undefined, onOutputs: () => undefined };
const fmt = (n: number): string => n.toLocaleString('en-US');

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

// ---- set-up ----------------------------------------------------------------------------------

interface Bench {
  dir: string;
  bench: BenchDatabase;
  coordinator: Coordinator;
}

function writeDags(dagsDir: string, dags: BenchDag[], throughputDags: string[]): void {
  mkdirSync(dagsDir, { recursive: true });
  for (const dag of dags) writeFileSync(join(dagsDir, `${dag.fileName}.yaml`), dag.yaml);
  for (const name of throughputDags) writeFileSync(join(dagsDir, `${name}.yaml`), `queue: ${QUEUE}\n${ONE_STEP}`);
}

async function seed(bench: BenchDatabase, dags: BenchDag[], logDir: string): Promise<void> {
  const started = performance.now();
  await seedBenchRuns(bench.db, {
    dags,
    runs: RUN_COUNT,
    chunk: SEED_CHUNK,
    logDir,
    onProgress: (done, total) => console.log(`  seeding runs: ${fmt(done)} / ${fmt(total)} (${((performance.now() - started) / 1000).toFixed(1)} s)`),
  });
  console.log(`  seeded ${fmt(RUN_COUNT)} runs over ${fmt(dags.length)} DAGs in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

async function setUp(throughputDags: string[]): Promise<Bench> {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-coord-bench-'));
  const dags = Array.from({ length: DAG_COUNT }, (_, i) => benchDag(i));
  writeDags(join(dir, 'dags'), dags, throughputDags);
  let bench: BenchDatabase;
  try {
    bench = await openBenchDatabase(DATABASE_URL, 'coordinator');
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`cannot open ${DATABASE_URL} (is PostgreSQL running? set TRELLIS_BENCH_DATABASE_URL): ${toError(error).message}`);
  }
  console.log(`  database ${DATABASE_URL}, schema ${bench.schema}`);
  const config = loadServerConfig({
    cwd: dir,
    env: {},
    overrides: { port: 0, grpcPort: 0, dagsDir: join(dir, 'dags'), dataDir: join(dir, 'data'), timezone: 'UTC', queues: [{ name: QUEUE, maxConcurrency: PARALLELISM }] },
  });
  try {
    await seed(bench, dags, config.logDir);
    const coordinator = await startCoordinator(config, createSilentLogger(), { watch: false, db: bench.db });
    // The start-up retention sweep visits every DAG with day-old runs (all 1,000) in the
    // background; reads are measured after it, not against it.
    await new Promise((resolve) => setTimeout(resolve, STARTUP_SETTLE_MS));
    return { dir, bench, coordinator };
  } catch (error) {
    await bench.cleanup();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

async function tearDown(b: Bench): Promise<void> {
  await b.coordinator.close();
  await b.bench.cleanup();
  rmSync(b.dir, { recursive: true, force: true });
}

// ---- HTTP ------------------------------------------------------------------------------------

async function call<T>(b: Bench, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(b.coordinator.apiUrl + path, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status} ${text.slice(0, 200)}`);
  return JSON.parse(text) as T;
}

// ---- read latency ----------------------------------------------------------------------------

interface LatencyResult {
  label: string;
  count: number;
  p50: number;
  p99: number;
}

/** One request at a time, so each figure is the request's own latency, body read included. */
async function measureReads(b: Bench, label: string, paths: (i: number) => string): Promise<LatencyResult> {
  for (let i = 0; i < WARMUP_REQUESTS; i += 1) await call(b, 'GET', paths(i));
  const times: number[] = [];
  for (let i = 0; i < MEASURED_REQUESTS; i += 1) {
    const path = paths(WARMUP_REQUESTS + i);
    const started = performance.now();
    await call(b, 'GET', path);
    times.push(performance.now() - started);
  }
  return { label, count: times.length, p50: percentile(times, 50), p99: percentile(times, 99) };
}

async function readLatencies(b: Bench): Promise<LatencyResult[]> {
  const targets = await sampleRuns(b.bench.db, WARMUP_REQUESTS + MEASURED_REQUESTS);
  if (targets.length === 0) throw new Error('no runs to read');
  const runPath = (i: number): string => {
    const t = targets[i % targets.length] as { dagName: string; dagRunId: string };
    return `/dag-runs/${encodeURIComponent(t.dagName)}/${encodeURIComponent(t.dagRunId)}`;
  };
  return [
    await measureReads(b, 'GET /dags?perPage=100', () => '/dags?perPage=100'),
    await measureReads(b, 'GET /dag-runs?limit=100', () => '/dag-runs?limit=100'),
    await measureReads(b, 'GET /dag-runs/{name}/{id}', runPath),
  ];
}

const SCRAPE_TARGET_MS = 50;
const SCRAPES = 300;
const SCRAPE_SPACING_MS = 50;

/**
 * GET /metrics as Prometheus would hit it, spread over 15 s so that the five-second refreshes
 * of the database aggregates happen during the measurement.
 */
async function scrapeLatency(b: Bench): Promise<LatencyResult> {
  const times: number[] = [];
  for (let i = 0; i < SCRAPES + 10; i += 1) {
    const started = performance.now();
    const res = await fetch(`${b.coordinator.apiUrl}/metrics`);
    const text = await res.text();
    if (!res.ok || !text.includes('svc_dag_runs_total')) throw new Error(`GET /metrics: HTTP ${res.status}`);
    if (i >= 10) times.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, SCRAPE_SPACING_MS));
  }
  return { label: 'GET /metrics', count: times.length, p50: percentile(times, 50), p99: percentile(times, 99) };
}

function printScrape(r: LatencyResult): void {
  console.log(`  metrics scrape, one every ${SCRAPE_SPACING_MS} ms (target p99 < ${SCRAPE_TARGET_MS} ms):`);
  console.log(`    ${r.label.padEnd(28)} p50 ${r.p50.toFixed(1).padStart(6)} ms   p99 ${r.p99.toFixed(1).padStart(6)} ms   n=${r.count}   ${r.p99 < SCRAPE_TARGET_MS ? 'PASS' : 'MISS'}`);
}

// ---- throughput ------------------------------------------------------------------------------

/** Runs `task` `total` times with `parallelism` workers. */
async function inParallel(total: number, parallelism: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: parallelism }, async () => {
      while (next < total) {
        const i = next;
        next += 1;
        await task(i);
      }
    }),
  );
}

let engineRunCounter = 0;
async function engineRun(dag: Dag, root: string): Promise<void> {
  engineRunCounter += 1;
  const id = `r${engineRunCounter}`;
  const result = await runDag({
    dag,
    params: [],
    identity: { dagName: dag.name, dagRunId: id, attemptId: 'a', rootDagRunName: dag.name, rootDagRunId: id, parentDagRunName: '', parentDagRunId: '' },
    logDir: join(root, id),
    reporter: nullReporter,
    // The bare engine writing its files: what the coordinator adds (storing status and log
    // chunks in the database) is what the ratio measures.
    streamLogs: false,
  }).done;
  if (result.status !== 4) throw new Error(`engine run ${id} ended with status ${result.status}`);
}

/** The engine benchmark's figure: runs/s of runDag alone, PARALLELISM at a time. */
async function engineRate(dag: Dag, root: string, total: number): Promise<number> {
  const started = performance.now();
  await inParallel(total, PARALLELISM, () => engineRun(dag, root));
  return total / ((performance.now() - started) / 1000);
}

type RunList = { dagRuns: Array<{ dagRunId: string; status: number }> };

/** Waits until no run of `name` is queued, then until none is running (nothing new gets queued meanwhile). */
async function waitUntilSettled(b: Bench, name: string): Promise<void> {
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  for (const status of [5, 1]) {
    while ((await call<RunList>(b, 'GET', `/dag-runs/${name}?status=${status}&limit=1`)).dagRuns.length > 0) {
      // A dispatcher that stopped admitting would otherwise hang the benchmark.
      if (Date.now() > deadline) throw new Error(`${name}: runs still ${status === 5 ? 'queued' : 'running'} after ${SETTLE_TIMEOUT_MS / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }
}

async function checkAllSucceeded(b: Bench, name: string, total: number): Promise<void> {
  const { dagRuns } = await call<RunList>(b, 'GET', `/dag-runs/${name}?limit=500`);
  const succeeded = dagRuns.filter((r) => r.status === 4).length;
  if (dagRuns.length !== total || succeeded !== total) throw new Error(`${name}: ${succeeded} of ${dagRuns.length} runs succeeded, expected ${total}`);
}

/** Runs/s from the first POST .../start until every run of `name` reached status 4. */
async function apiRate(b: Bench, name: string, total: number): Promise<number> {
  const started = performance.now();
  await inParallel(total, POSTERS, async () => {
    await call(b, 'POST', `/dags/${name}/start`, {});
  });
  await waitUntilSettled(b, name);
  const elapsed = performance.now() - started;
  await checkAllSucceeded(b, name, total);
  return total / (elapsed / 1000);
}

interface ThroughputResult {
  api: number[];
  engine: number[];
}

async function throughput(b: Bench, names: string[]): Promise<ThroughputResult> {
  const { dag } = loadDag(ONE_STEP, { fileName: 'bench' });
  if (dag === undefined) throw new Error('the one-step DAG does not parse');
  const root = join(b.dir, 'engine-logs');
  const [warm, ...rounds] = names;
  await engineRate(dag, root, 40);
  await apiRate(b, warm ?? 'tp-warm', 40);
  const result: ThroughputResult = { api: [], engine: [] };
  for (const [round, name] of rounds.entries()) {
    const engine = await engineRate(dag, root, THROUGHPUT_RUNS);
    const api = await apiRate(b, name, THROUGHPUT_RUNS);
    result.engine.push(engine);
    result.api.push(api);
    console.log(`  round ${round + 1}: API ${api.toFixed(0)} runs/s, engine only ${engine.toFixed(0)} runs/s, ratio ${((api / engine) * 100).toFixed(0)}%`);
  }
  return result;
}

// ---- report ----------------------------------------------------------------------------------

function printLatencies(results: LatencyResult[]): void {
  console.log(`  reads over HTTP, one at a time after ${WARMUP_REQUESTS} warm-up requests (target p99 < ${LATENCY_TARGET_MS} ms):`);
  for (const r of results) {
    const verdict = r.p99 < LATENCY_TARGET_MS ? 'PASS' : 'MISS';
    console.log(`    ${r.label.padEnd(28)} p50 ${r.p50.toFixed(1).padStart(6)} ms   p99 ${r.p99.toFixed(1).padStart(6)} ms   n=${r.count}   ${verdict}`);
  }
}

function printThroughput(t: ThroughputResult): void {
  const api = median(t.api);
  const engine = median(t.engine);
  // Each round measures both back to back, under the same load: the ratio is taken per round.
  const ratio = median(t.api.map((a, i) => a / (t.engine[i] ?? Number.POSITIVE_INFINITY)));
  console.log(`  1-step runs, ${PARALLELISM} at a time (queue ${QUEUE}, maxConcurrency ${PARALLELISM}), ${THROUGHPUT_RUNS} per round, median of ${ROUNDS} rounds:`);
  console.log(`    API (POST start -> status 4) ${api.toFixed(1)} runs/s   engine only ${engine.toFixed(1)} runs/s   median per-round ratio ${(ratio * 100).toFixed(1)}%   ${ratio >= THROUGHPUT_TARGET ? 'PASS' : 'MISS'} (target >= ${THROUGHPUT_TARGET * 100}%)`);
  console.log(`TARGET coordinator API runs/s vs bare engine: ${(ratio * 100).toFixed(1)}% (target >= ${THROUGHPUT_TARGET * 100}%) ${ratio >= THROUGHPUT_TARGET ? 'PASS' : 'MISS'}`);
}

async function main(): Promise<void> {
  const throughputDags = ['bench-tp-warm', ...Array.from({ length: ROUNDS }, (_, i) => `bench-tp-${i + 1}`)];
  console.log(`coordinator benchmark (node ${process.version}, ${process.platform}; ${fmt(DAG_COUNT)} DAGs, ${fmt(RUN_COUNT)} runs)`);
  const b = await setUp(throughputDags);
  try {
    printLatencies(await readLatencies(b));
    printScrape(await scrapeLatency(b));
    printThroughput(await throughput(b, throughputDags));
  } finally {
    await tearDown(b);
  }
}

await main();
