// Resident memory of the service processes, as an operator's `ps` shows it (VmRSS), started as
// `trellis server` and `trellis worker` from the built CLI (run `npm run build` first):
//   - a worker with 16 pollers, idle, and at its peak while 16 one-step runs sleep on it and
//     then while 200 quick one-step runs go through it (its spawner process, which starts the
//     steps, counted apart), and idle again after them (V8's optimizing compiler is back on by
//     then: see packages/cli/src/optimizing-compiler.ts);
//   - a coordinator on PostgreSQL, idle, and after 200 one-step runs on its local executor;
//   - a coordinator on its embedded PGlite, idle.
//   npm run bench -w packages/worker
// PostgreSQL: TRELLIS_TEST_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { children, rss } from './proc-stats.js';
import { Cluster, freePort, stopProcess, waitFor, type Proc } from '../../../test-e2e/support/cluster.js';

const MB = 1024 * 1024;
const POLLERS = 16;
const BUSY_RUNS = 16;
const LOAD_RUNS = 200;
const IN_FLIGHT = 16;
// Start-up work (JIT, first queries, the first heartbeats) is over well within this.
const SETTLE_MS = 3_000;
const SAMPLE_MS = 100;
const TARGETS_MB = { workerIdle: 60, workerBusy: 80, coordinatorIdle: 85, coordinatorLoaded: 120 };
const CLI = resolve(import.meta.dirname, '..', '..', 'cli', 'dist', 'main.js');
const TERMINAL = '(2, 3, 4, 6, 8)';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function pidOf(proc: Proc | undefined): number {
  const pid = proc?.child.pid;
  if (pid === undefined) throw new Error('process not started');
  return pid;
}

/** The median of five samples a second apart: one sample can catch a collection in progress. */
async function idleRss(pid: number): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < 5; i += 1) {
    samples.push(rss(pid));
    await sleep(1000);
  }
  return samples.sort((a, b) => a - b)[2] ?? 0;
}

function report(name: string, bytes: number, targetMb?: number): void {
  const value = `${(bytes / MB).toFixed(1)} MB`;
  if (targetMb === undefined) console.log(`memory: ${name}: ${value} (no target)`);
  else console.log(`TARGET ${name}: ${value} (target < ${targetMb} MB) ${bytes < targetMb * MB ? 'PASS' : 'MISS'}`);
}

async function terminalCount(cluster: Cluster, dagName: string): Promise<number> {
  const [row] = await cluster.sql<{ n: number }>(`SELECT count(*)::int AS n FROM runs WHERE dag_name = $1 AND status IN ${TERMINAL}`, [dagName]);
  return row?.n ?? 0;
}

/**
 * `count` runs of `dagName` through the API, IN_FLIGHT requests at a time; resolves when all
 * have ended. `sample` runs every SAMPLE_MS from the first request to the last end: quick runs
 * mostly end while others are still being enqueued.
 */
async function load(cluster: Cluster, dagName: string, count: number, sample: () => void = () => undefined): Promise<void> {
  const before = await terminalCount(cluster, dagName);
  const sampler = setInterval(sample, SAMPLE_MS);
  try {
    let next = 0;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < count) {
          const id = `${dagName}-${next++}`;
          const answer = await cluster.call('POST', `/dags/${dagName}/enqueue`, { dagRunId: id });
          if (answer.status !== 200) throw new Error(`enqueue answered ${answer.status}`);
        }
      }),
    );
    while ((await terminalCount(cluster, dagName)) < before + count) await sleep(SAMPLE_MS);
  } finally {
    clearInterval(sampler);
    sample();
  }
}

/** Peak RSS of a process and of its children (its spawner), sampled while a phase runs. */
class Peaks {
  process = 0;
  children = 0;

  constructor(private readonly pid: number) {}

  readonly sample = (): void => {
    this.process = Math.max(this.process, rss(this.pid));
    this.children = Math.max(this.children, ...children(this.pid).map(rss));
  };
}

async function benchCluster(): Promise<void> {
  const queue = 'queue: mem\n';
  const cluster = new Cluster({
    dags: {
      busy: `${queue}worker_selector:\n  pool: mem\nsteps:\n  - name: s\n    command: sleep 2\n`,
      quick: `${queue}worker_selector:\n  pool: mem\nsteps:\n  - name: s\n    command: "true"\n`,
      local: `${queue}steps:\n  - name: s\n    command: "true"\n`,
    },
    config: 'logLevel: warn\nqueues:\n  - name: mem\n    maxConcurrency: 64\n',
  });
  await cluster.start();
  try {
    cluster.startWorker('mem-worker', 'pool=mem', { pollers: POLLERS });
    await cluster.workerReady('mem-worker');
    const worker = pidOf(cluster.workers.get('mem-worker'));
    const coordinator = pidOf(cluster.coordinator);
    await sleep(SETTLE_MS);
    report('worker idle RSS (16 pollers)', await idleRss(worker), TARGETS_MB.workerIdle);
    report('coordinator idle RSS (PostgreSQL)', await idleRss(coordinator), TARGETS_MB.coordinatorIdle);

    // Both phases run up to 16 steps at once (16 pollers): 16 that sleep 2 s, then 200 that exit at once.
    const sleeping = new Peaks(worker);
    await load(cluster, 'busy', BUSY_RUNS, sleeping.sample);
    const quick = new Peaks(worker);
    await load(cluster, 'quick', LOAD_RUNS, quick.sample);
    report(`worker peak RSS, ${BUSY_RUNS} sleeping steps`, sleeping.process);
    report(`worker peak RSS, ${LOAD_RUNS} quick one-step runs`, quick.process);
    report(`worker peak RSS while running ${BUSY_RUNS} steps`, Math.max(sleeping.process, quick.process), TARGETS_MB.workerBusy);
    report(`worker's spawner process peak RSS while running ${BUSY_RUNS} steps`, Math.max(sleeping.children, quick.children));
    await sleep(SETTLE_MS);
    report(`worker RSS idle again after ${BUSY_RUNS + LOAD_RUNS} runs`, await idleRss(worker));

    const started = performance.now();
    await load(cluster, 'local', LOAD_RUNS);
    // Not a target here: shows what the memory settings cost the throughput they were measured under.
    console.log(`memory: the ${LOAD_RUNS} local runs took ${((performance.now() - started) / 1000).toFixed(1)} s`);
    await sleep(SETTLE_MS);
    report(`coordinator RSS after ${LOAD_RUNS} one-step runs on its local executor (PostgreSQL)`, rss(coordinator), TARGETS_MB.coordinatorLoaded);
  } finally {
    await cluster.stop();
  }
}

/** `trellis server` on its embedded PGlite, in a directory of its own, idle. */
async function benchPglite(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-mem-'));
  const port = await freePort();
  const child = spawn(process.execPath, [CLI, 'server', '--port', String(port), '--grpc-port', '-1', '--data-dir', join(dir, 'data'), '--dags-dir', join(dir, 'dags'), '--log-level', 'warn'], { cwd: dir, stdio: 'ignore' });
  const proc: Proc = { child, output: () => '', exited: new Promise((r) => child.once('exit', (code) => r(code))) };
  try {
    await waitFor('the PGlite coordinator to answer', async () => ((await fetch(`http://127.0.0.1:${port}/api/v1/health`)).ok ? true : undefined), 60_000);
    await sleep(SETTLE_MS);
    report('coordinator idle RSS (PGlite)', await idleRss(pidOf(proc)), TARGETS_MB.coordinatorIdle);
  } finally {
    await stopProcess(proc);
    rmSync(dir, { recursive: true, force: true });
  }
}

await benchCluster();
await benchPglite();
