// The list endpoints and the metrics scrape as the run history grows: GET /dag-runs?limit=100
// with 1,000 and then 100,000 runs stored, GET /dags?perPage=100 over 1,000 DAGs, and GET
// /metrics with 100,000 runs, 8 requests in flight over loopback HTTP; the lists both as 8
// identical requests (which share reads) and as 8 requests for different pages. The coordinator and the
// HTTP client each run in a process of their own (bench-processes.ts), so the client's fetch and
// JSON parsing take no turns on the coordinator's event loop; the CPU figure is the coordinator's.
//   npm run bench -w packages/coordinator
// PostgreSQL: TRELLIS_BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test; the
// benchmark works in a schema of its own and drops it at the end.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openBenchDatabase, seedBenchRuns, type BenchDatabase } from '@trellis/store/testing';
import { benchDag, percentile } from './bench-dags.js';
import { BenchProcess, benchServerConfig, cpuMicros, startCoordinatorProcess, type AnswerCheck, type ServedCoordinator } from './bench-processes.js';

const DATABASE_URL = process.env.TRELLIS_BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const COORDINATOR_ID = 'lists';
const DAG_COUNT = 1_000;
const SMALL_HISTORY = 1_000;
const LARGE_HISTORY = 100_000;
const SEED_CHUNK = 20_000;
const IN_FLIGHT = 8;
const WARMUP_REQUESTS = 80;
const MEASURED_REQUESTS = 800;
// p99 of a loaded 2-core machine moves from one batch to the next: each figure is the median of
// this many batches.
const REPETITIONS = 3;
const LIST_TARGET_MS = 15;
const FLAT_TARGET = 0.2;
const SCRAPE_TARGET_MS = 50;
const SCRAPES = 300;
// Spread over 15 s so that the five-second refreshes of the database aggregates fall inside.
const SCRAPE_SPACING_MS = 50;
const STARTUP_SETTLE_MS = 2_000;

const fmt = (n: number): string => n.toLocaleString('en-US');

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function target(name: string, value: number, unit: string, limit: number): void {
  console.log(`TARGET ${name}: ${value.toFixed(1)} ${unit} (target < ${limit} ${unit}) ${value < limit ? 'PASS' : 'MISS'}`);
}

interface Batch {
  p50: number;
  p99: number;
  /** The coordinator's CPU per request (the client's and PostgreSQL's not counted): what the code costs, whatever else the machine runs. */
  cpuMs: number;
}

const firstPath = (path: string | string[]): string => [path].flat()[0] ?? '';

/** `IN_FLIGHT` requests at a time from the client process; each figure is one request's latency, body read and checked included. */
async function batch(client: BenchProcess, c: ServedCoordinator, path: string | string[], check: AnswerCheck): Promise<Batch> {
  const cpuBefore = await cpuMicros(c);
  const answer = await client.ask({ type: 'measure', measurement: { url: c.apiUrl, path, inFlight: IN_FLIGHT, warmup: WARMUP_REQUESTS, measured: MEASURED_REQUESTS, check } });
  if (answer.type !== 'times') throw new Error(`${firstPath(path)}: the client answered ${answer.type}`);
  const cpuMs = ((await cpuMicros(c)) - cpuBefore) / 1000 / (WARMUP_REQUESTS + MEASURED_REQUESTS);
  return { p50: percentile(answer.times, 50), p99: percentile(answer.times, 99), cpuMs };
}

/** The size of one answer's body. */
async function bodyBytes(c: ServedCoordinator, path: string): Promise<number> {
  const res = await fetch(c.apiUrl + path);
  return Buffer.byteLength(await res.text());
}

/** The median p50 and p99 of `REPETITIONS` batches, printed (with the size of the first path's body). */
async function measure(client: BenchProcess, c: ServedCoordinator, label: string, path: string | string[], check: AnswerCheck): Promise<Batch> {
  const batches: Batch[] = [];
  for (let i = 0; i < REPETITIONS; i += 1) batches.push(await batch(client, c, path, check));
  const result = { p50: median(batches.map((b) => b.p50)), p99: median(batches.map((b) => b.p99)), cpuMs: median(batches.map((b) => b.cpuMs)) };
  const p99s = batches.map((b) => b.p99.toFixed(1)).join(' / ');
  console.log(`    ${label.padEnd(44)} ${IN_FLIGHT} in flight   p50 ${result.p50.toFixed(1).padStart(5)} ms   p99 ${result.p99.toFixed(1).padStart(5)} ms (batches ${p99s})   cpu ${result.cpuMs.toFixed(2)} ms/request   body ${fmt(await bodyBytes(c, firstPath(path)))} B`);
  return result;
}

/** GET /metrics as Prometheus would hit it, one at a time (from this process: nothing else runs in it meanwhile). */
async function scrape(c: ServedCoordinator): Promise<Batch> {
  const times: number[] = [];
  let bytes = 0;
  const cpuBefore = await cpuMicros(c);
  for (let i = 0; i < SCRAPES + 10; i += 1) {
    const started = performance.now();
    const res = await fetch(`${c.apiUrl}/metrics`);
    const text = await res.text();
    if (!res.ok || !text.includes('svc_dag_runs_total')) throw new Error(`GET /metrics: HTTP ${res.status}`);
    if (i >= 10) times.push(performance.now() - started);
    bytes = Buffer.byteLength(text);
    await new Promise((resolve) => setTimeout(resolve, SCRAPE_SPACING_MS));
  }
  const cpuMs = ((await cpuMicros(c)) - cpuBefore) / 1000 / (SCRAPES + 10);
  const result = { p50: percentile(times, 50), p99: percentile(times, 99), cpuMs };
  console.log(`    ${'GET /metrics'.padEnd(44)} one every ${SCRAPE_SPACING_MS} ms   p50 ${result.p50.toFixed(1).padStart(5)} ms   p99 ${result.p99.toFixed(1).padStart(5)} ms   cpu ${result.cpuMs.toFixed(2)} ms/scrape   body ${fmt(bytes)} B`);
  return result;
}

async function seed(bench: BenchDatabase, from: number, runs: number, logDir: string): Promise<void> {
  const started = performance.now();
  const dags = Array.from({ length: DAG_COUNT }, (_, i) => benchDag(i));
  await seedBenchRuns(bench.db, { dags, runs, from, chunk: SEED_CHUNK, logDir });
  console.log(`  seeded runs ${fmt(from)}-${fmt(runs)} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

/**
 * Identical requests in flight share one read (read-coalescing.ts), which flatters a bench of
 * identical requests: each list is also measured with the requests in flight all asking for
 * different pages, which share nothing.
 */
const DISTINCT_PAGES = 10;

/** The first `DISTINCT_PAGES` pages of the run list, each by the cursor the page before handed out. */
async function runPagePaths(c: ServedCoordinator): Promise<string[]> {
  const paths = ['/dag-runs?limit=100'];
  while (paths.length < DISTINCT_PAGES) {
    const res = await fetch(c.apiUrl + (paths[paths.length - 1] ?? ''));
    const { nextCursor } = (await res.json()) as { nextCursor?: string };
    if (nextCursor === undefined) throw new Error(`the run list ended before page ${paths.length + 1}`);
    paths.push(`/dag-runs?limit=100&cursor=${encodeURIComponent(nextCursor)}`);
  }
  return paths;
}

const dagPagePaths = Array.from({ length: DISTINCT_PAGES }, (_, i) => `/dags?perPage=100&page=${i + 1}`);

const runPage: AnswerCheck = { kind: 'runs', count: 100 };
const dagPage: AnswerCheck = { kind: 'dags', count: 100 };

async function main(): Promise<void> {
  console.log(`list benchmark (node ${process.version}; ${fmt(DAG_COUNT)} DAGs, ${fmt(SMALL_HISTORY)} then ${fmt(LARGE_HISTORY)} runs, median of ${REPETITIONS} batches of ${MEASURED_REQUESTS}; coordinator and client in processes of their own)`);
  const dir = mkdtempSync(join(tmpdir(), 'trellis-lists-bench-'));
  const config = benchServerConfig(dir, COORDINATOR_ID);
  mkdirSync(config.dagsDir);
  for (let i = 0; i < DAG_COUNT; i += 1) {
    const dag = benchDag(i);
    writeFileSync(join(config.dagsDir, `${dag.fileName}.yaml`), dag.yaml);
  }
  const bench = await openBenchDatabase(DATABASE_URL, 'lists');
  const started: BenchProcess[] = [];
  try {
    await seed(bench, 1, SMALL_HISTORY, config.logDir);
    const coordinator = await startCoordinatorProcess({ dir, id: COORDINATOR_ID, databaseUrl: DATABASE_URL, schema: bench.schema });
    started.push(coordinator.process);
    const { process: client } = await BenchProcess.start('latency-client.ts', {});
    started.push(client);
    await new Promise((resolve) => setTimeout(resolve, STARTUP_SETTLE_MS));
    console.log(`  ${fmt(SMALL_HISTORY)} runs stored:`);
    const small = await measure(client, coordinator, 'GET /dag-runs?limit=100', '/dag-runs?limit=100', runPage);
    await seed(bench, SMALL_HISTORY + 1, LARGE_HISTORY, config.logDir);
    console.log(`  ${fmt(LARGE_HISTORY)} runs stored:`);
    const large = await measure(client, coordinator, 'GET /dag-runs?limit=100', '/dag-runs?limit=100', runPage);
    const largeDistinct = await measure(client, coordinator, `GET /dag-runs?limit=100, ${DISTINCT_PAGES} pages`, await runPagePaths(coordinator), runPage);
    const dags = await measure(client, coordinator, `GET /dags?perPage=100 (${fmt(DAG_COUNT)} DAGs)`, '/dags?perPage=100', dagPage);
    const dagsDistinct = await measure(client, coordinator, `GET /dags?perPage=100, ${DISTINCT_PAGES} pages`, dagPagePaths, dagPage);
    const metrics = await scrape(coordinator);
    const growth = (large.p99 - small.p99) / small.p99;
    target(`GET /dag-runs?limit=100 p99, ${IN_FLIGHT} in flight, ${fmt(LARGE_HISTORY)} runs`, large.p99, 'ms', LIST_TARGET_MS);
    console.log(`TARGET GET /dag-runs?limit=100 p99 growth ${fmt(SMALL_HISTORY)} -> ${fmt(LARGE_HISTORY)} runs: ${(growth * 100).toFixed(0)}% (target < ${FLAT_TARGET * 100}%) ${growth < FLAT_TARGET ? 'PASS' : 'MISS'}`);
    target(`GET /dag-runs?limit=100 p99, ${IN_FLIGHT} different pages in flight, ${fmt(LARGE_HISTORY)} runs`, largeDistinct.p99, 'ms', LIST_TARGET_MS);
    target(`GET /dags?perPage=100 p99, ${IN_FLIGHT} in flight, ${fmt(DAG_COUNT)} DAGs`, dags.p99, 'ms', LIST_TARGET_MS);
    target(`GET /dags?perPage=100 p99, ${IN_FLIGHT} different pages in flight, ${fmt(DAG_COUNT)} DAGs`, dagsDistinct.p99, 'ms', LIST_TARGET_MS);
    target(`GET /metrics p99, ${fmt(LARGE_HISTORY)} runs`, metrics.p99, 'ms', SCRAPE_TARGET_MS);
  } finally {
    for (const part of started.reverse()) await part.stop();
    await bench.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
