// Two coordinators sharing only PostgreSQL, each with its own data and DAGs directories: 1,000
// DAG files imported through A (B's directory starts empty) with 20,000 runs of history, and a
// 100 MB step log sent by a real worker process to A (gRPC reports, stored as chunks). Read
// through B, 1 and 8 requests in flight: the DAG list's first 100, the step log's tail and the
// run log's tail; and a page in the middle of the step log by offset.
//   npm run bench -w packages/coordinator
// PostgreSQL: TRELLIS_BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test; the
// benchmark works in a schema of its own and drops it at the end.
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { openDatabase } from '@trellis/store';
import { openBenchDatabase, seedBenchRuns } from '@trellis/store/testing';
import { createSilentLogger, loadServerConfig, startCoordinator, type Coordinator } from '@trellis/coordinator';
import { benchDag, percentile } from './bench-dags.js';

const DATABASE_URL = process.env.TRELLIS_BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const CLI = resolve(import.meta.dirname, '..', '..', 'cli', 'dist', 'main.js');
const LOG_BYTES = 100 * 1024 * 1024;
const IN_FLIGHT = 8;
const WARMUP_REQUESTS = 80;
const MEASURED_REQUESTS = 800;
const LATENCY_TARGET_MS = 25;
const DAG_COUNT = 1_000;
const HISTORY_RUNS = 20_000;
// 64-byte lines, numbered: 1,638,400 of them make the 100 MB.
const LINE_BYTES = 64;
const LINES = LOG_BYTES / LINE_BYTES;
const DAG = `worker_selector:\n  pool: bench\nsteps:\n  - name: flood\n    command: awk 'BEGIN { for (i = 1; i <= ${LINES}; i++) printf "%08d %054d\\n", i, 0 }'\n`;

/** A coordinator with its own DAGs and data directories (`dags-<id>`, `data-<id>`). */
function configOf(dir: string, id: string) {
  return loadServerConfig({ cwd: dir, env: {}, overrides: { port: 0, grpcPort: 0, dagsDir: join(dir, `dags-${id}`), dataDir: join(dir, `data-${id}`), timezone: 'UTC', coordinatorId: id } });
}

async function startOne(dir: string, id: string, db: Awaited<ReturnType<typeof openDatabase>>): Promise<Coordinator> {
  return startCoordinator(configOf(dir, id), createSilentLogger(), { watch: false, db });
}

async function getJson<T>(c: Coordinator, path: string, init: RequestInit = {}): Promise<T> {
  const res = await fetch(c.apiUrl + path, { ...init, headers: { 'content-type': 'application/json' } });
  const text = await res.text();
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status} ${text.slice(0, 200)}`);
  return JSON.parse(text) as T;
}

async function waitForEnd(c: Coordinator, path: string): Promise<number> {
  for (;;) {
    const { dagRun } = await getJson<{ dagRun: { status: number } }>(c, path);
    if ([2, 3, 4, 6, 8].includes(dagRun.status)) return dagRun.status;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * `inFlight` requests at a time; each figure is one request's latency, body read included. The
 * client shares the process (one thread) with both coordinators: at 8 in flight a request also
 * waits for the others' turns, at 1 it is the request's own time.
 */
async function measure<T>(c: Coordinator, label: string, path: (i: number) => string, check: (page: T) => boolean, inFlight = IN_FLIGHT): Promise<number> {
  const times: number[] = [];
  let next = 0;
  const total = WARMUP_REQUESTS + MEASURED_REQUESTS;
  const cpuBefore = process.cpuUsage();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < total) {
        const i = next;
        next += 1;
        const started = performance.now();
        const page = await getJson<T>(c, path(i));
        if (i >= WARMUP_REQUESTS) times.push(performance.now() - started);
        if (!check(page)) throw new Error(`${label}: unexpected answer ${JSON.stringify(page).slice(0, 100)}`);
      }
    }),
  );
  // This process's CPU per request (client and both coordinators; PostgreSQL's is not counted):
  // what the code costs, whatever else the machine runs.
  const cpu = process.cpuUsage(cpuBefore);
  const cpuMs = (cpu.user + cpu.system) / 1000 / total;
  const p99 = percentile(times, 99);
  console.log(`    ${label.padEnd(56)} ${String(inFlight).padStart(2)} in flight   p50 ${percentile(times, 50).toFixed(1).padStart(6)} ms   p99 ${p99.toFixed(1).padStart(6)} ms   cpu ${cpuMs.toFixed(2)} ms/request   n=${times.length}   ${p99 < LATENCY_TARGET_MS ? 'PASS' : 'MISS'}`);
  return p99;
}

async function main(): Promise<void> {
  console.log(`two coordinators benchmark (node ${process.version}; ${DAG_COUNT} DAGs and a ${LOG_BYTES / 1024 / 1024} MB step log through coordinator A, read through B)`);
  const dir = mkdtempSync(join(tmpdir(), 'trellis-logs-bench-'));
  const dags = Array.from({ length: DAG_COUNT }, (_, i) => benchDag(i));
  mkdirSync(join(dir, 'dags-bench-a'));
  mkdirSync(join(dir, 'dags-bench-b'));
  for (const dag of dags) writeFileSync(join(dir, 'dags-bench-a', `${dag.fileName}.yaml`), dag.yaml);
  writeFileSync(join(dir, 'dags-bench-a', 'flood.yaml'), DAG);
  const bench = await openBenchDatabase(DATABASE_URL, 'logs');
  await seedBenchRuns(bench.db, { dags, runs: HISTORY_RUNS, logDir: configOf(dir, 'bench-a').logDir });
  const other = await openDatabase({ databaseUrl: DATABASE_URL, schema: bench.schema });
  const a = await startOne(dir, 'bench-a', bench.db);
  const b = await startOne(dir, 'bench-b', other);
  const worker = spawn(process.execPath, [CLI, 'worker', '--coordinator', a.grpcAddress ?? '', '--id', 'bench-w', '--labels', 'pool=bench', '--work-dir', join(dir, 'work'), '--log-level', 'warn'], { stdio: 'inherit' });
  try {
    const started = performance.now();
    await getJson(b, '/dags/flood/start', { method: 'POST', body: JSON.stringify({ dagRunId: 'flood-1' }) });
    const status = await waitForEnd(b, '/dag-runs/flood/flood-1');
    const seconds = (performance.now() - started) / 1000;
    if (status !== 4) throw new Error(`the run ended with status ${status}`);
    console.log(`  ingest: ${LOG_BYTES / 1024 / 1024} MB through the worker's reports to A in ${seconds.toFixed(1)} s (${(LOG_BYTES / 1024 / 1024 / seconds).toFixed(1)} MB/s, run start to end)`);
    console.log(`  reads through B (target p99 < ${LATENCY_TARGET_MS} ms):`);
    const line = (n: number): string => `${String(n).padStart(8, '0')} ${'0'.repeat(54)}`;
    type Page = { content: string; totalLines: number };
    const dagList = `GET /dags?perPage=100 (${DAG_COUNT + 1} DAGs, ${HISTORY_RUNS} runs)`;
    const stepTail = '/dag-runs/flood/flood-1/steps/flood/log?tail=100';
    const runTail = '/dag-runs/flood/flood-1/log?tail=100';
    const fullPage = (p: { dags: unknown[] }): boolean => p.dags.length === 100;
    const lastLines = (p: Page): boolean => p.totalLines === LINES && p.content.endsWith(line(LINES));
    const p99s: Record<string, number> = {};
    for (const inFlight of [1, IN_FLIGHT]) {
      p99s[`dags ${inFlight}`] = await measure(b, dagList, () => '/dags?perPage=100', fullPage, inFlight);
      p99s[`step ${inFlight}`] = await measure(b, `GET ${stepTail}`, () => stepTail, lastLines, inFlight);
      await measure<Page>(b, `GET ${runTail}`, () => runTail, (p) => p.totalLines > 0, inFlight);
    }
    for (const [name, key] of [[`GET /dags?perPage=100 p99 through B, ${IN_FLIGHT} in flight, ${DAG_COUNT} DAGs`, `dags ${IN_FLIGHT}`], [`GET ${stepTail} p99 through B, ${IN_FLIGHT} in flight, 100 MB log`, `step ${IN_FLIGHT}`]] as const) {
      const p99 = p99s[key] ?? Number.POSITIVE_INFINITY;
      console.log(`TARGET ${name}: ${p99.toFixed(1)} ms (target < ${LATENCY_TARGET_MS} ms) ${p99 < LATENCY_TARGET_MS ? 'PASS' : 'MISS'}`);
    }
    await measure<Page>(b, 'GET .../steps/flood/log?offset=<anywhere>&limit=100', (i) => `/dag-runs/flood/flood-1/steps/flood/log?offset=${1 + ((i * 7919 * 211) % (LINES - 100))}&limit=100`, (p) => p.content.split('\n').length === 100);
  } finally {
    worker.kill('SIGTERM');
    await new Promise((r) => worker.once('exit', r));
    await b.close();
    await a.close();
    await other.close();
    await bench.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
