// Dagu 1.30.2 measured on this machine in the same run as our own bench, so the comparison
// shares hardware and load. The real binary is installed on demand from the npm registry into
// a cache under the OS temp dir (never a project dependency), and every Dagu process listens on
// 127.0.0.1 only, on ports picked at runtime, with its own throw-away DAGU_HOME.
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { arch, availableParallelism, loadavg, platform, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

export interface DaguFigures {
  version: string;
  localRunsPerSec: number;
  workerRunsPerSec: number;
  enqueueToStartP50Ms?: number;
  enqueueToStartP99Ms?: number;
  notes: string[];
}

export interface MeasureDaguOptions {
  runs: number;
  /** Runs of the local phase (default `runs`); the worker phases take half of `runs` each. */
  localRuns?: number;
  log: (line: string) => void;
}

const DAGU_VERSION = '1.30.2';
const DAGU_PACKAGE = '@dagu-org/dagu-linux-x64';
/** Shared by every bench run, so the ~50 MB package is fetched once per machine. */
const CACHE_DIR = join(tmpdir(), 'trellis-bench-dagu');
const INSTALL_LIMIT_MS = 180_000;
const READY_LIMIT_MS = 30_000;
/** Per phase: the bench must end even if Dagu stalls. */
const PHASE_LIMIT_MS = 120_000;
const LATENCY_LIMIT_MS = 90_000;
const POLL_MS = 100;
const REQUEST_LIMIT_MS = 10_000;
/** Like our own bench: several submitters, so the HTTP round trip is not the bottleneck. */
const IN_FLIGHT = 8;
const WORKER_LABEL_KEY = 'trellisbench';
const WORKER_LABEL_VALUE = 'dagu';
const LOCAL_DAG = 'bench-local';
const REMOTE_DAG = 'bench-remote';
/** Dagu's status codes for runs that will not change any more (failed, aborted, succeeded, partial). */
const TERMINAL = new Set([2, 3, 4, 6]);
const SUCCEEDED = 4;

const execFileAsync = promisify(execFile);

interface DaguRun {
  dagRunId: string;
  status: number;
  statusLabel?: string;
  queuedAt?: string;
  startedAt?: string;
  finishedAt?: string;
  workerId?: string;
  log?: string;
}

interface PhaseResult {
  submitted: number;
  completed: number;
  failed: number;
  seconds: number;
  timedOut: boolean;
  runs: DaguRun[];
}

interface Cluster {
  bin: string;
  home: string;
  baseUrl: string;
  children: ChildProcess[];
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The environment of `npm run bench` carries npm_config_* of the Trellis workspace (workspace,
 * prefix...), which would point the nested install at /work/main; keep only registry settings.
 */
function installEnv(): NodeJS.ProcessEnv {
  const keep = new Set(['npm_config_registry', 'npm_config_cache', 'npm_config_userconfig']);
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.toLowerCase().startsWith('npm_') || keep.has(key.toLowerCase())));
}

async function installedBinary(): Promise<string | undefined> {
  const packageDir = join(CACHE_DIR, 'node_modules', ...DAGU_PACKAGE.split('/'));
  const manifestPath = join(packageDir, 'package.json');
  if (!existsSync(manifestPath)) return undefined;
  const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as { version?: string; bin?: string | Record<string, string> };
  if (manifest.version !== DAGU_VERSION) return undefined;
  const relative = typeof manifest.bin === 'string' ? manifest.bin : manifest.bin?.['dagu'];
  if (relative === undefined) throw new Error(`${DAGU_PACKAGE} declares no "dagu" bin`);
  const bin = join(packageDir, relative);
  return existsSync(bin) ? bin : undefined;
}

/** Installs the real Dagu release from npm into the temp cache, reusing an earlier install. */
async function ensureDaguBinary(log: (line: string) => void): Promise<string> {
  if (platform() !== 'linux' || arch() !== 'x64') throw new Error(`${DAGU_PACKAGE} runs on linux/x64 only, not ${platform()}/${arch()}`);
  const cached = await installedBinary();
  if (cached !== undefined) {
    log(`dagu: using cached ${cached}`);
    return cached;
  }
  await mkdir(CACHE_DIR, { recursive: true });
  log(`dagu: npm install --no-save --prefix ${CACHE_DIR} ${DAGU_PACKAGE}@${DAGU_VERSION}`);
  await execFileAsync('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', CACHE_DIR, `${DAGU_PACKAGE}@${DAGU_VERSION}`], {
    cwd: CACHE_DIR,
    env: installEnv(),
    timeout: INSTALL_LIMIT_MS,
  });
  const bin = await installedBinary();
  if (bin === undefined) throw new Error(`npm install finished but no dagu binary under ${CACHE_DIR}`);
  return bin;
}

async function daguVersion(bin: string): Promise<string> {
  const { stdout, stderr } = await execFileAsync(bin, ['version'], { timeout: REQUEST_LIMIT_MS });
  return `${stdout}${stderr}`.trim();
}

/** Asks the kernel for a free loopback port; the tiny race until Dagu binds it is acceptable for a bench. */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * DAGU_HOME puts dags/, data/ and logs/ under the temp home; TMPDIR confines the worker's copies
 * of DAG files there too, so nothing is left in the shared temp dir.
 */
function daguEnv(home: string): NodeJS.ProcessEnv {
  return { ...process.env, DAGU_HOME: home, TMPDIR: join(home, 'tmp') };
}

function startProcess(cluster: Cluster, name: string, args: string[]): ChildProcess {
  const out = createWriteStream(join(cluster.home, `${name}.log`));
  const child = spawn(cluster.bin, args, { cwd: cluster.home, env: daguEnv(cluster.home), stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.pipe(out);
  child.stderr?.pipe(out);
  cluster.children.push(child);
  return child;
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** SIGTERM lets Dagu unregister from its service registry; SIGKILL if it does not go in time. */
async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || exited(child)) return;
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const inTime = await Promise.race([gone.then(() => true), sleep(8_000).then(() => false)]);
  if (!inTime && !exited(child)) child.kill('SIGKILL');
}

/** Last resort if the bench process dies mid-run: no Dagu may outlive it. */
function killSync(children: ChildProcess[]): void {
  for (const child of children) if (!exited(child)) child.kill('SIGKILL');
}

async function api<T>(cluster: Cluster, method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${cluster.baseUrl}/api/v2${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? null : JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_LIMIT_MS),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 200)}`);
  return JSON.parse(text) as T;
}

/** Polls `check` until it holds; gives up at once if the Dagu process it waits on has exited. */
async function waitUntil(what: string, limitMs: number, child: ChildProcess | undefined, check: () => Promise<boolean>): Promise<void> {
  const deadline = performance.now() + limitMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // Not up yet: connection refused and the like are expected while Dagu starts.
    }
    if (child !== undefined && exited(child)) throw new Error(`dagu ${child.spawnargs[1] ?? ''} exited (${child.exitCode ?? child.signalCode}) while waiting for ${what}`);
    if (performance.now() > deadline) throw new Error(`timed out after ${limitMs} ms waiting for ${what}`);
    await sleep(200);
  }
}

/**
 * maxActiveRuns lifts Dagu's default of one active run per DAG, which would serialise the
 * queue; the worker DAG's workerSelector makes the scheduler dispatch it to the coordinator.
 */
async function writeDags(home: string, runs: number): Promise<void> {
  const step = ['steps:', '  - name: s', '    command: "true"', ''].join('\n');
  await writeFile(join(home, 'dags', `${LOCAL_DAG}.yaml`), `maxActiveRuns: ${runs}\n${step}`);
  await writeFile(
    join(home, 'dags', `${REMOTE_DAG}.yaml`),
    `maxActiveRuns: ${runs}\nworkerSelector:\n  ${WORKER_LABEL_KEY}: ${WORKER_LABEL_VALUE}\n${step}`,
  );
}

/** Server + scheduler + coordinator in one process (start-all), then one labelled worker. */
async function startCluster(bin: string, runs: number, log: (line: string) => void): Promise<Cluster> {
  const home = await mkdtemp(join(tmpdir(), 'trellis-dagu-run-'));
  for (const dir of ['dags', 'tmp']) await mkdir(join(home, dir), { recursive: true });
  await writeDags(home, runs);
  const [httpPort, grpcPort] = [await freePort(), await freePort()];
  const cluster: Cluster = { bin, home, baseUrl: `http://127.0.0.1:${httpPort}`, children: [] };
  const loopback = ['--host', '127.0.0.1', '--port', String(httpPort), '--dags', join(home, 'dags')];
  // advertise 127.0.0.1: the default is the hostname, which may resolve off loopback.
  const coordinator = ['--coordinator.host', '127.0.0.1', '--coordinator.port', String(grpcPort), '--coordinator.advertise', '127.0.0.1'];
  log(`dagu: DAGU_HOME=${home} dagu start-all ${[...loopback, ...coordinator].join(' ')}`);
  startProcess(cluster, 'start-all', ['start-all', ...loopback, ...coordinator]);
  return cluster;
}

async function startWorker(cluster: Cluster, log: (line: string) => void): Promise<void> {
  const args = ['worker', '--worker.id', 'bench-worker', '--worker.labels', `${WORKER_LABEL_KEY}=${WORKER_LABEL_VALUE}`, '--peer.insecure'];
  log(`dagu: DAGU_HOME=${cluster.home} dagu ${args.join(' ')}`);
  const worker = startProcess(cluster, 'worker', args);
  // The worker finds the coordinator through the file-based service registry in DAGU_HOME.
  await waitUntil('the worker to report to the coordinator', READY_LIMIT_MS, worker, async () => {
    const { workers } = await api<{ workers?: { id?: string }[] }>(cluster, 'GET', '/workers');
    return (workers ?? []).some((w) => w.id === 'bench-worker');
  });
}

async function listRuns(cluster: Cluster, dag: string): Promise<DaguRun[]> {
  const { dagRuns } = await api<{ dagRuns: DaguRun[] | null }>(cluster, 'GET', `/dag-runs?name=${encodeURIComponent(dag)}`);
  return dagRuns ?? [];
}

/** Submits with a few concurrent callers; each call throws on a non-2xx answer. */
async function submitAll(ids: string[], submit: (id: string) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(IN_FLIGHT, ids.length) }, async () => {
      while (next < ids.length) {
        const id = ids[next++];
        if (id !== undefined) await submit(id);
      }
    }),
  );
}

/** Polls the run list until every submitted run is terminal or the phase limit passes. */
async function awaitRuns(cluster: Cluster, dag: string, ids: string[], started: number, limitMs: number): Promise<PhaseResult> {
  const wanted = new Set(ids);
  for (;;) {
    const runs = (await listRuns(cluster, dag)).filter((r) => wanted.has(r.dagRunId));
    const done = runs.filter((r) => TERMINAL.has(r.status));
    const timedOut = performance.now() - started > limitMs;
    if (done.length === ids.length || timedOut) {
      return {
        submitted: ids.length,
        completed: done.filter((r) => r.status === SUCCEEDED).length,
        failed: done.filter((r) => r.status !== SUCCEEDED).length,
        seconds: (performance.now() - started) / 1000,
        timedOut,
        runs,
      };
    }
    await sleep(POLL_MS);
  }
}

/** Submits N runs and measures successful completions per second, submission included. */
async function throughputPhase(cluster: Cluster, dag: string, endpoint: 'start' | 'enqueue', prefix: string, count: number): Promise<PhaseResult> {
  const ids = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
  const started = performance.now();
  let submitError: Error | undefined;
  try {
    await submitAll(ids, async (id) => {
      if (performance.now() - started > PHASE_LIMIT_MS) throw new Error('phase time limit reached while submitting');
      await api(cluster, 'POST', `/dags/${dag}/${endpoint}`, { dagRunId: id });
    });
  } catch (error) {
    // Runs already accepted still finish; wait for them so a partial figure can be reported.
    submitError = error instanceof Error ? error : new Error(String(error));
  }
  const result = await awaitRuns(cluster, dag, ids, started, PHASE_LIMIT_MS);
  if (submitError !== undefined && result.completed === 0) throw submitError;
  return result;
}

/** Dagu names each attempt folder attempt_YYYYMMDD_HHMMSS_mmmZ_<id>: a millisecond UTC timestamp. */
function attemptTime(name: string): number | undefined {
  const m = /^attempt_(\d{4})(\d{2})(\d{2})_(\d{2})(\d{2})(\d{2})_(\d{3})Z_/.exec(name);
  if (m === null) return undefined;
  const [, y, mo, d, h, mi, s, ms] = m.map(Number);
  if (y === undefined || mo === undefined || d === undefined || h === undefined || mi === undefined || s === undefined || ms === undefined) return undefined;
  return Date.UTC(y, mo - 1, d, h, mi, s, ms);
}

async function findRunDir(root: string, suffix: string): Promise<string | undefined> {
  const entries = await readdir(root, { withFileTypes: true, recursive: true });
  const hit = entries.find((e) => e.isDirectory() && e.name.startsWith('dag-run_') && e.name.endsWith(suffix));
  return hit === undefined ? undefined : join(hit.parentPath, hit.name);
}

/**
 * The API gives queuedAt/startedAt to the second only, too coarse for a ~0.1 s latency. Dagu's
 * run records are finer: status.jsonl keeps createdAt (the enqueue) in epoch ms, and the attempt
 * that executed the run is a folder named with its millisecond creation time.
 */
async function recordLatencyMs(home: string, dag: string, id: string): Promise<number | undefined> {
  const runDir = await findRunDir(join(home, 'data', 'dag-runs', dag), `_${id}`);
  if (runDir === undefined) return undefined;
  const attempts = (await readdir(runDir)).filter((n) => n.startsWith('attempt_')).sort();
  const last = attempts.at(-1);
  const startedMs = last === undefined ? undefined : attemptTime(last);
  if (last === undefined || startedMs === undefined || attempts.length < 2) return undefined;
  const lines = (await readFile(join(runDir, last, 'status.jsonl'), 'utf8')).trim().split('\n');
  const status = JSON.parse(lines.at(-1) ?? '{}') as { createdAt?: number };
  return typeof status.createdAt === 'number' ? startedMs - status.createdAt : undefined;
}

function apiLatencyMs(run: DaguRun): number | undefined {
  if (run.queuedAt === undefined || run.startedAt === undefined) return undefined;
  const ms = Date.parse(run.startedAt) - Date.parse(run.queuedAt);
  return Number.isFinite(ms) ? ms : undefined;
}

/** One run at a time through the worker on an idle cluster, as our own latency bench does. */
async function latencyPhase(cluster: Cluster, samples: number, notes: string[]): Promise<number[]> {
  const latencies: number[] = [];
  let coarse = 0;
  const started = performance.now();
  for (let i = 0; i < samples; i += 1) {
    const id = `lat-${i}`;
    await api(cluster, 'POST', `/dags/${REMOTE_DAG}/enqueue`, { dagRunId: id });
    const remaining = LATENCY_LIMIT_MS - (performance.now() - started);
    const result = await awaitRuns(cluster, REMOTE_DAG, [id], performance.now(), Math.max(0, remaining));
    const run = result.runs[0];
    if (result.timedOut || run === undefined || run.status !== SUCCEEDED) {
      notes.push(`latency: stopped after ${latencies.length}/${samples} samples (${result.timedOut ? 'time limit' : `run ${id} status ${run?.statusLabel ?? 'unknown'}`})`);
      break;
    }
    let ms = await recordLatencyMs(cluster.home, REMOTE_DAG, id);
    if (ms === undefined) {
      ms = apiLatencyMs(run);
      coarse += 1;
    }
    if (ms !== undefined) latencies.push(ms);
  }
  if (coarse > 0) notes.push(`latency: ${coarse} sample(s) from the API's 1 s resolution queuedAt/startedAt, the rest from Dagu's ms run records`);
  return latencies;
}

function describePhase(name: string, how: string, result: PhaseResult): string {
  const rate = result.completed / result.seconds;
  const partial = result.timedOut ? `; TIMED OUT after ${PHASE_LIMIT_MS / 1000} s, partial figure` : '';
  const failures = result.failed > 0 ? `; ${result.failed} run(s) failed` : '';
  return `${name}: ${result.completed}/${result.submitted} runs via ${how} in ${result.seconds.toFixed(2)} s = ${rate.toFixed(2)} runs/s${failures}${partial}`;
}

/** Dagu records why a run failed only in the run's log file, as the first ERROR line. */
async function failureReason(run: DaguRun): Promise<string> {
  const text = run.log === undefined ? '' : await readFile(run.log, 'utf8').catch(() => '');
  const line = text.split('\n').find((l) => l.includes('level=ERROR'));
  return (line === undefined ? undefined : /err="((?:[^"\\]|\\.)*)"/.exec(line)?.[1]) ?? line ?? 'no error in its log';
}

async function noteFailures(name: string, result: PhaseResult, notes: string[]): Promise<void> {
  const failed = result.runs.find((r) => TERMINAL.has(r.status) && r.status !== SUCCEEDED);
  if (failed !== undefined) notes.push(`${name}: run ${failed.dagRunId} ${failed.statusLabel ?? failed.status}: ${await failureReason(failed)}`);
}

async function measureLocal(cluster: Cluster, runs: number, log: (line: string) => void, notes: string[]): Promise<number> {
  log(`dagu: local phase, ${runs} runs via POST /api/v2/dags/${LOCAL_DAG}/start`);
  const result = await throughputPhase(cluster, LOCAL_DAG, 'start', 'local', runs);
  const line = describePhase('local', `POST /api/v2/dags/${LOCAL_DAG}/start`, result);
  log(`dagu: ${line}`);
  notes.push(line);
  await noteFailures('local', result, notes);
  return result.completed / result.seconds;
}

/**
 * Five batches, median rate: a batch's figure depends on where in Dagu's 3 s queue cycle it
 * lands and on how busy the disk is (batches measured 7.6 to 20 runs/s here), so one batch
 * alone is a coin toss and three still swung the median from 8 to 16.
 */
export const WORKER_BATCHES = 5;

async function measureWorker(cluster: Cluster, runs: number, log: (line: string) => void, notes: string[]): Promise<number> {
  const rates: number[] = [];
  for (let batch = 1; batch <= WORKER_BATCHES; batch += 1) {
    log(`dagu: worker phase ${batch}/${WORKER_BATCHES}, ${runs} runs via POST /api/v2/dags/${REMOTE_DAG}/enqueue (workerSelector ${WORKER_LABEL_KEY}=${WORKER_LABEL_VALUE})`);
    const result = await throughputPhase(cluster, REMOTE_DAG, 'enqueue', `remote${batch}`, runs);
    const line = describePhase(`worker batch ${batch}`, `POST /api/v2/dags/${REMOTE_DAG}/enqueue`, result);
    log(`dagu: ${line}`);
    notes.push(line);
    await noteFailures('worker', result, notes);
    const elsewhere = result.runs.filter((r) => TERMINAL.has(r.status) && r.workerId !== 'bench-worker').length;
    if (elsewhere > 0) notes.push(`worker: ${elsewhere} run(s) did not run on bench-worker`);
    rates.push(result.completed / result.seconds);
  }
  const sorted = [...rates].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** Runs a measurement so that its failure becomes a note and the other figures still count. */
async function guarded<T>(what: string, notes: string[], log: (line: string) => void, fallback: T, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    const line = `${what} failed: ${errorText(error)}`;
    log(`dagu: ${line}`);
    notes.push(line);
    return fallback;
  }
}

async function runPhases(cluster: Cluster, options: MeasureDaguOptions, figures: DaguFigures): Promise<void> {
  const { log } = options;
  const { notes } = figures;
  const workerRuns = Math.max(1, Math.ceil(options.runs / 2));
  // Each idle sample waits for Dagu's next queue pass (~3 s), so a few suffice.
  const samples = Math.min(15, Math.max(5, Math.floor(options.runs / 2)));
  await waitUntil('the Dagu API', READY_LIMIT_MS, cluster.children[0], async () => (await api<{ status?: string }>(cluster, 'GET', '/health')).status === 'healthy');
  figures.localRunsPerSec = await guarded('local phase', notes, log, 0, () => measureLocal(cluster, options.localRuns ?? options.runs, log, notes));
  const workerUp = await guarded('worker start', notes, log, false, async () => {
    await startWorker(cluster, log);
    return true;
  });
  if (!workerUp) return;
  figures.workerRunsPerSec = await guarded('worker phase', notes, log, 0, () => measureWorker(cluster, workerRuns, log, notes));
  log(`dagu: latency phase, ${samples} runs one at a time via the worker`);
  const latencies = await guarded('latency phase', notes, log, [], () => latencyPhase(cluster, samples, notes));
  if (latencies.length === 0) return;
  figures.enqueueToStartP50Ms = percentile(latencies, 50);
  figures.enqueueToStartP99Ms = percentile(latencies, 99);
  notes.push(`latency: enqueue to start on the worker, ${latencies.length} idle samples, p50 ${figures.enqueueToStartP50Ms} ms, p99 ${figures.enqueueToStartP99Ms} ms`);
}

/**
 * Measures Dagu on this machine: local runs/s (POST .../start, Dagu runs each DAG itself),
 * runs/s through start-all's coordinator and one labelled worker (POST .../enqueue), and
 * enqueue-to-start latency on an idle worker. Never throws for Dagu's sake: what could not be
 * measured stays 0 / undefined and `notes` says why.
 */
export async function measureDagu(options: MeasureDaguOptions): Promise<DaguFigures> {
  const figures: DaguFigures = { version: DAGU_VERSION, localRunsPerSec: 0, workerRunsPerSec: 0, notes: [] };
  const { log } = options;
  let cluster: Cluster | undefined;
  const onExit = (): void => killSync(cluster?.children ?? []);
  process.once('exit', onExit);
  try {
    const bin = await ensureDaguBinary(log);
    figures.version = await daguVersion(bin);
    if (!figures.version.includes(DAGU_VERSION)) figures.notes.push(`expected Dagu ${DAGU_VERSION}, the binary says ${figures.version}`);
    // The machine may be shared with tests or our own cluster: record how busy it was.
    figures.notes.push(`load average ${loadavg()[0]?.toFixed(2) ?? '?'} on ${availableParallelism()} cores at start`);
    cluster = await startCluster(bin, Math.max(options.runs, options.localRuns ?? 0), log);
    await runPhases(cluster, options, figures);
  } catch (error) {
    const line = `setup failed: ${errorText(error)}`;
    log(`dagu: ${line}`);
    figures.notes.push(line);
  } finally {
    await Promise.all((cluster?.children ?? []).map((child) => stopProcess(child)));
    process.removeListener('exit', onExit);
    await cleanUp(cluster, figures, log);
  }
  return figures;
}

/** Keeps the Dagu home (logs, run records) when something went wrong, for a look afterwards. */
async function cleanUp(cluster: Cluster | undefined, figures: DaguFigures, log: (line: string) => void): Promise<void> {
  if (cluster === undefined) return;
  const troubled = figures.notes.some((n) => /(phase|start|setup) failed:|TIMED OUT|stopped after/.test(n));
  if (troubled) {
    figures.notes.push(`Dagu home kept for inspection: ${cluster.home}`);
    return;
  }
  await rm(cluster.home, { recursive: true, force: true });
  log(`dagu: removed ${cluster.home}`);
}
