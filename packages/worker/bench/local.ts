// Issue 23 target 1: the coordinator's own executor (no worker), 1-step runs through the REST
// API with 16 requests in flight, against the bare `/bin/sh -c true` spawn rate from Node at the
// same concurrency, measured round by round beside it. The coordinator is a real `trellis
// server` process, on PostgreSQL (a database of its own) or on its embedded default (PGlite).
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { children, cpuMs } from './proc-stats.js';
import { Cluster, freePort, startProcess, stopProcess, waitFor, type Proc } from '../../../test-e2e/support/cluster.js';

export const IN_FLIGHT = 16;
export const RUNS_PER_ROUND = 200;
const WARM_UP_ROUNDS = 2;
const ROUNDS = 3;
const SPAWNS_PER_ROUND = 600;
/** Every run goes through this global queue: a DAG-local queue would admit one run at a time. */
const QUEUE = 'local';
const DAG = 'local-one';
const DAG_YAML = `queue: ${QUEUE}\nsteps:\n  - name: s\n    command: "true"\n`;
const CONFIG = `logLevel: warn\nqueues:\n  - name: ${QUEUE}\n    maxConcurrency: ${IN_FLIGHT}\n`;
const SETTLE_POLL_MS = 25;
/** A latency sample's start-sync wait, in seconds: far beyond any run here. */
const SYNC_TIMEOUT_SEC = 120;
const SETTLE_LIMIT_MS = 120_000;
const TERMINAL = new Set([2, 3, 4, 6, 8]);
const SUCCEEDED = 4;

export type Backend = 'postgres' | 'pglite';

export interface LocalRound {
  runsPerSec: number;
  spawnsPerSec: number;
  /** The coordinator's and its spawner's CPU (user + system) per run, in ms; undefined where /proc cannot tell. */
  cpuMsPerRun: { coordinator: number; spawner: number | undefined } | undefined;
}

export interface LocalFigures {
  backend: Backend;
  rounds: LocalRound[];
  /** POST .../start-sync sent to the run's recorded finishedAt, 16 runs in flight, in ms. */
  submitToFinish: number[];
}

interface Target {
  api: string;
  /** The `trellis server` process, whose CPU each round reports. */
  pid: number | undefined;
  stop(): Promise<void>;
}

/** The coordinator's CPU so far and its children's (the spawner), in ms, with the children's pids. */
interface ServiceCpu {
  coordinator: number;
  spawner: number;
  children: string;
}

function serviceCpuMs(pid: number | undefined): ServiceCpu | undefined {
  if (pid === undefined) return undefined;
  const coordinator = cpuMs(pid);
  if (coordinator === undefined) return undefined;
  const kids = children(pid);
  return { coordinator, spawner: kids.reduce((sum, child) => sum + (cpuMs(child) ?? 0), 0), children: kids.join(',') };
}

/**
 * CPU per run between two readings. It includes answering the bench's own polls (two small
 * queue reads every 25 ms, so a slower round costs a little more); the spawner's figure is
 * left out when its process changed between the readings (a respawn would make it wrong).
 */
function cpuPerRun(before: ServiceCpu | undefined, after: ServiceCpu | undefined, runs: number): LocalRound['cpuMsPerRun'] {
  if (before === undefined || after === undefined) return undefined;
  return { coordinator: (after.coordinator - before.coordinator) / runs, spawner: before.children === after.children ? (after.spawner - before.spawner) / runs : undefined };
}

// node:http with keep-alive costs the load generator, which shares the 2 cores, far less than fetch().
// Idle sockets are dropped after 2 s, before the server's 5 s keep-alive closes them under a request.
const agent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT * 2, timeout: 2_000 });

function call<T>(api: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const text = body === undefined ? undefined : JSON.stringify(body);
  const headers = text === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) };
  return new Promise((resolve, reject) => {
    const req = request(`${api}${path}`, { method, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const answer = Buffer.concat(chunks).toString();
        if (res.statusCode !== 200) reject(new Error(`${method} ${path}: HTTP ${res.statusCode ?? '?'} ${answer.slice(0, 200)}`));
        else resolve(JSON.parse(answer) as T);
      });
    });
    req.on('error', reject);
    req.end(text);
  });
}

/** Runs `task` `total` times, `inFlight` at a time. */
async function inParallel(total: number, inFlight: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < total) await task(next++);
    }),
  );
}

function spawnTrue(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', 'true'], { stdio: 'ignore' });
    child.once('error', reject);
    child.once('exit', () => resolve());
  });
}

/** The machine's ceiling for the executor: `/bin/sh -c true` spawned from Node, `inFlight` at a time. */
export async function bareSpawnRate(total = SPAWNS_PER_ROUND, inFlight = IN_FLIGHT): Promise<number> {
  const started = performance.now();
  await inParallel(total, inFlight, spawnTrue);
  return total / ((performance.now() - started) / 1000);
}

async function postgresTarget(): Promise<Target> {
  const cluster = new Cluster({ dags: { [DAG]: DAG_YAML }, config: CONFIG });
  await cluster.start();
  return { api: cluster.api, pid: cluster.coordinator?.child.pid, stop: () => cluster.stop() };
}

/** `trellis server` without --database-url: the embedded PGlite in its data directory. */
async function pgliteTarget(): Promise<Target> {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-local-bench-'));
  mkdirSync(join(dir, 'dags'));
  writeFileSync(join(dir, 'dags', `${DAG}.yaml`), DAG_YAML);
  writeFileSync(join(dir, 'trellis.yaml'), `dagsDir: ./dags\ndataDir: ./data\nlogFormat: json\n${CONFIG}`);
  const [httpPort, grpcPort] = [await freePort(), await freePort()];
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('TRELLIS_')));
  let proc: Proc | undefined;
  try {
    proc = startProcess(['server', '--config', join(dir, 'trellis.yaml'), '--port', String(httpPort), '--grpc-port', String(grpcPort), '--worker-token', 'bench-token'], dir, env);
    const api = `http://127.0.0.1:${httpPort}/api/v1`;
    // PGlite compiles its WebAssembly and migrates at start: on a loaded 2-core machine that took over a minute.
    await waitFor('the PGlite coordinator to answer', async () => ((await fetch(`${api}/health`)).ok ? true : undefined), 300_000);
    const started = proc;
    return {
      api,
      pid: started.child.pid,
      stop: async () => {
        await stopProcess(started);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    if (proc !== undefined) await stopProcess(proc);
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

type RunList = { dagRuns: Array<{ dagRunId: string; status: number }> };
type RunDetails = { dagRun: { status: number; finishedAt: string } };
type QueueItems = { pagination: { totalRecords: number } };

/**
 * Whether the bench queue still holds a run (queued or running): two one-item pages of the queue
 * with their totals, where the run list would send the coordinator's JSON for 500 runs every 25 ms
 * (about 290 KB, which this process, on the same two cores, also parses) while the runs it waits
 * for run.
 */
async function queueBusy(api: string): Promise<boolean> {
  const counts = await Promise.all(
    (['queued', 'running'] as const).map(async (type) => (await call<QueueItems>(api, 'GET', `/queues/${QUEUE}/items?type=${type}&perPage=1`)).pagination.totalRecords),
  );
  return counts.some((n) => n > 0);
}

async function terminalCount(api: string, ids: Set<string>): Promise<number> {
  const { dagRuns } = await call<RunList>(api, 'GET', `/dag-runs/${DAG}?limit=500`);
  const done = dagRuns.filter((r) => ids.has(r.dagRunId) && TERMINAL.has(r.status));
  const failed = done.find((r) => r.status !== SUCCEEDED);
  if (failed !== undefined) throw new Error(`run ${failed.dagRunId} ended with status ${failed.status}`);
  return done.length;
}

/**
 * Runs/s from the first POST .../start until all RUNS_PER_ROUND runs succeeded: 16 submitters,
 * the queue runs 16 at once, as Dagu's local figure submits and then waits.
 */
async function throughputRound(api: string, round: string): Promise<number> {
  const ids = Array.from({ length: RUNS_PER_ROUND }, (_, i) => `${round}-${i}`);
  const started = performance.now();
  await inParallel(ids.length, IN_FLIGHT, async (i) => {
    await call(api, 'POST', `/dags/${DAG}/start`, { dagRunId: ids[i] });
  });
  const wanted = new Set(ids);
  const deadline = Date.now() + SETTLE_LIMIT_MS;
  // Every run of the round was queued before the first look: once the queue is empty, the list
  // says whether each of them ended, and how.
  while ((await queueBusy(api)) || (await terminalCount(api, wanted)) < ids.length) {
    if (Date.now() > deadline) throw new Error(`round ${round}: runs unfinished after ${SETTLE_LIMIT_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, SETTLE_POLL_MS));
  }
  return ids.length / ((performance.now() - started) / 1000);
}

/**
 * One run's submit-to-finish: from sending its start to the finishedAt the coordinator recorded.
 * Through start-sync, which answers as the run ends: polling each of 16 runs every few
 * milliseconds sent the coordinator thousands of reads a second beside the runs it measured
 * (a 5 ms poll: p50 75-98 ms against 57-70 through start-sync, side by side in the twelfth session).
 */
async function submitToFinish(api: string, dagRunId: string): Promise<number> {
  const sent = Date.now();
  const { dagRun } = await call<RunDetails>(api, 'POST', `/dags/${DAG}/start-sync`, { dagRunId, timeout: SYNC_TIMEOUT_SEC });
  if (dagRun.status !== SUCCEEDED) throw new Error(`run ${dagRunId} ended with status ${dagRun.status}`);
  return Date.parse(dagRun.finishedAt) - sent;
}

async function measureOn(target: Target, backend: Backend, log: (line: string) => void): Promise<LocalFigures> {
  // Not counted: the first few hundred runs pay for JIT compilation and cold caches.
  for (let round = 0; round < WARM_UP_ROUNDS; round += 1) log(`${backend} warm-up ${round + 1}/${WARM_UP_ROUNDS}: ${(await throughputRound(target.api, `w${round}`)).toFixed(1)} runs/s (not counted)`);
  const rounds: LocalRound[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    // Measured back to back, so each round's ratio shares the machine's load of the moment.
    const spawnsPerSec = await bareSpawnRate();
    const cpuBefore = serviceCpuMs(target.pid);
    const runsPerSec = await throughputRound(target.api, `r${round}`);
    const cpuAfter = serviceCpuMs(target.pid);
    const cpuMsPerRun = cpuPerRun(cpuBefore, cpuAfter, RUNS_PER_ROUND);
    rounds.push({ runsPerSec, spawnsPerSec, cpuMsPerRun });
    const cpu = cpuMsPerRun === undefined ? '' : `, CPU per run: coordinator ${cpuMsPerRun.coordinator.toFixed(2)} ms, spawner ${cpuMsPerRun.spawner?.toFixed(2) ?? '?'} ms`;
    log(`${backend} round ${round + 1}: ${runsPerSec.toFixed(1)} runs/s, sh -c true ${spawnsPerSec.toFixed(0)} spawns/s (${IN_FLIGHT} in flight), ${((runsPerSec / spawnsPerSec) * 100).toFixed(0)}%${cpu}`);
  }
  const latencies: number[] = [];
  await inParallel(RUNS_PER_ROUND, IN_FLIGHT, async (i) => {
    latencies.push(await submitToFinish(target.api, `l-${i}`));
  });
  return { backend, rounds, submitToFinish: latencies };
}

/** Target 1 on one backend: a fresh coordinator process, stopped afterwards. */
export async function measureLocalExecutor(backend: Backend, log: (line: string) => void): Promise<LocalFigures> {
  const target = backend === 'postgres' ? await postgresTarget() : await pgliteTarget();
  try {
    return await measureOn(target, backend, log);
  } finally {
    await target.stop();
  }
}

export function closeLocalAgent(): void {
  agent.destroy();
}
