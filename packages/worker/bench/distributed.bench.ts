// Distributed throughput and latency: a coordinator process on PostgreSQL and one worker
// process; the coordinator's own executor on PostgreSQL and on PGlite beside the bare spawn
// rate (local.ts); against Dagu 1.30.2 measured in the same run (installed on demand, loopback
// only). Every target's verdict is a `TARGET <name>: <value> (target <x>) PASS|MISS` line,
// which `npm run bench` gathers into its closing table.
//   npm run bench -w packages/worker
import { Agent, request } from 'node:http';
import { Cluster } from '../../../test-e2e/support/cluster.js';
import { WORKER_BATCHES, measureDagu } from './dagu.js';
import { IN_FLIGHT, RUNS_PER_ROUND as LOCAL_RUNS, closeLocalAgent, measureLocalExecutor, type LocalFigures } from './local.js';

const WARM_UP_ROUNDS = 3;
const ROUNDS = 5;
const RUNS_PER_ROUND = 300;
const LATENCY_SAMPLES = 100;
const POLLERS = 8;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

async function terminalCount(cluster: Cluster, dagName: string): Promise<number> {
  const [row] = await cluster.sql<{ n: number }>('SELECT count(*)::int AS n FROM runs WHERE dag_name = $1 AND status IN (2, 3, 4, 6, 8)', [dagName]);
  return row?.n ?? 0;
}

/** Polled every 25 ms: often enough for a ~1% error on a round of seconds, rarely enough not to load PostgreSQL itself. */
async function waitForTerminal(cluster: Cluster, dagName: string, count: number): Promise<void> {
  while ((await terminalCount(cluster, dagName)) < count) await new Promise((r) => setTimeout(r, 25));
}

// The load generator shares the 2 cores with the system it measures: node:http with keep-alive
// costs it a fraction of the CPU fetch() does per request.
const agent = new Agent({ keepAlive: true, maxSockets: 16 });

function enqueue(cluster: Cluster, dagName: string, dagRunId: string): Promise<number> {
  const body = JSON.stringify({ dagRunId });
  return new Promise((resolve, reject) => {
    const req = request(`${cluster.api}/dags/${dagName}/enqueue`, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** N one-step runs enqueued through the API as fast as it takes them; completions per second. */
async function throughput(cluster: Cluster, round: number): Promise<number> {
  const started = performance.now();
  const inFlight = 16;
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < RUNS_PER_ROUND) {
        const id = `t${round}-${next++}`;
        const status = await enqueue(cluster, 'one', id);
        if (status !== 200) throw new Error(`enqueue answered ${status}`);
      }
    }),
  );
  await waitForTerminal(cluster, 'one', (round + 1) * RUNS_PER_ROUND);
  return RUNS_PER_ROUND / ((performance.now() - started) / 1000);
}

/** One sequential run's path from enqueue to its step's start, in ms, split at the hand-out and the worker's ack. */
interface LatencySample {
  total: number;
  toDispatch: number;
  toAck: number;
  toStep: number;
}

/** Enqueue (queued_at) to the step's start on the worker, one run at a time on an idle cluster. */
async function latency(cluster: Cluster): Promise<LatencySample[]> {
  const samples: LatencySample[] = [];
  for (let i = 0; i < LATENCY_SAMPLES; i += 1) {
    const id = `l${i}`;
    await cluster.call('POST', '/dags/single/enqueue', { dagRunId: id });
    await waitForTerminal(cluster, 'single', i + 1);
    const [row] = await cluster.sql<{ total: number; dispatch: number; ack: number; step: number }>(
      `SELECT extract(epoch FROM (s.started - r.queued_at)) * 1000 AS total,
              extract(epoch FROM (r.dispatched_at - r.queued_at)) * 1000 AS dispatch,
              extract(epoch FROM (r.acked_at - r.dispatched_at)) * 1000 AS ack,
              extract(epoch FROM (s.started - r.acked_at)) * 1000 AS step
       FROM runs r JOIN LATERAL (SELECT (n.data->>'startedAt')::timestamptz AS started FROM run_nodes n WHERE n.run_id = r.id AND n.kind = 'step') s ON true
       WHERE r.dag_name = 'single' AND r.dag_run_id = $1`,
      [id],
    );
    samples.push({ total: Number(row?.total ?? Number.NaN), toDispatch: Number(row?.dispatch ?? Number.NaN), toAck: Number(row?.ack ?? Number.NaN), toStep: Number(row?.step ?? Number.NaN) });
  }
  return samples;
}

async function benchTrellis(): Promise<{ runsPerSec: number[]; latencies: LatencySample[] }> {
  const cluster = new Cluster({
    dags: {
      one: 'queue: bench\nworker_selector:\n  pool: bench\nsteps:\n  - name: s\n    command: "true"\n',
      single: 'worker_selector:\n  pool: bench\nsteps:\n  - name: s\n    command: "true"\n',
    },
    config: 'logLevel: warn\nqueues:\n  - name: bench\n    maxConcurrency: 64\n',
  });
  await cluster.start();
  try {
    cluster.startWorker('bench-worker', 'pool=bench', { pollers: POLLERS });
    await cluster.workerReady('bench-worker');
    const runsPerSec: number[] = [];
    // Not counted: about the first thousand runs pay for JIT compilation in the coordinator and
    // worker (their CPU per run halves over them) and for cold caches in PostgreSQL; the rounds
    // after measure the steady state of a long-running service.
    for (let round = 0; round < WARM_UP_ROUNDS; round += 1) {
      console.log(`  trellis warm-up ${round + 1}/${WARM_UP_ROUNDS}: ${(await throughput(cluster, round)).toFixed(1)} runs/s (not counted)`);
    }
    for (let round = WARM_UP_ROUNDS; round < WARM_UP_ROUNDS + ROUNDS; round += 1) {
      runsPerSec.push(await throughput(cluster, round));
      console.log(`  trellis round ${round - WARM_UP_ROUNDS + 1}: ${runsPerSec.at(-1)?.toFixed(1)} runs/s (${RUNS_PER_ROUND} one-step runs, coordinator -> 1 worker, ${POLLERS} pollers)`);
    }
    const latencies = await latency(cluster);
    return { runsPerSec, latencies };
  } finally {
    agent.destroy();
    await cluster.stop();
  }
}

function target(name: string, value: string, goal: string, pass: boolean): void {
  console.log(`TARGET ${name}: ${value} (target ${goal}) ${pass ? 'PASS' : 'MISS'}`);
}

/** Prints one backend's figures as soon as they are measured: a later failure does not lose them. */
function printLocal(figures: LocalFigures): void {
  const rate = median(figures.rounds.map((r) => r.runsPerSec));
  const spawns = median(figures.rounds.map((r) => r.spawnsPerSec));
  const share = median(figures.rounds.map((r) => r.runsPerSec / r.spawnsPerSec));
  console.log(`local ${figures.backend}: ${rate.toFixed(1)} runs/s median of ${figures.rounds.length} rounds of ${LOCAL_RUNS} (${IN_FLIGHT} in flight), sh -c true ${spawns.toFixed(0)} spawns/s, per-round share ${figures.rounds.map((r) => `${((r.runsPerSec / r.spawnsPerSec) * 100).toFixed(0)}%`).join(', ')}`);
  target(`local runs/s vs bare spawn, ${figures.backend}`, `${(share * 100).toFixed(1)}%`, '>= 40%', share >= 0.4);
  const cpu = figures.rounds.flatMap((r) => (r.cpuMsPerRun === undefined ? [] : [r.cpuMsPerRun]));
  // What the service spends per run moves less with the machine's other load than runs/s do
  // (it includes answering the bench's polls, local.ts): the figure to compare code by.
  const spawner = cpu.flatMap((c) => (c.spawner === undefined ? [] : [c.spawner]));
  if (cpu.length > 0) console.log(`local ${figures.backend}: CPU per run, median of rounds: coordinator ${median(cpu.map((c) => c.coordinator)).toFixed(2)} ms, its spawner ${spawner.length > 0 ? `${median(spawner).toFixed(2)} ms` : '?'}`);
  const p50 = percentile(figures.submitToFinish, 50);
  console.log(`local ${figures.backend}: submit-to-finish p50 ${p50.toFixed(1)} ms, p99 ${percentile(figures.submitToFinish, 99).toFixed(1)} ms (${figures.submitToFinish.length} runs, ${IN_FLIGHT} in flight)`);
  // Little's law: with a fixed number in flight, the mean time in the system is that number over
  // the completion rate, and no run can complete faster than the machine spawns its step.
  console.log(`local ${figures.backend}: the bare spawn rate alone puts the mean at ${IN_FLIGHT} in flight at >= ${((IN_FLIGHT / spawns) * 1000).toFixed(0)} ms (${IN_FLIGHT} / ${spawns.toFixed(0)} spawns/s)`);
  target(`local submit-to-finish p50, ${figures.backend}`, `${p50.toFixed(1)} ms`, '< 50 ms', p50 < 50);
}

const local: LocalFigures[] = [];
try {
  for (const backend of ['postgres', 'pglite'] as const) {
    try {
      const figures = await measureLocalExecutor(backend, (line) => console.log(`  local ${line}`));
      local.push(figures);
      printLocal(figures);
    } catch (error) {
      // The other figures still count; the missing ones show as MISS in the table.
      console.log(`local ${backend}: not measured: ${error instanceof Error ? error.message : String(error)}`);
      target(`local runs/s vs bare spawn, ${backend}`, 'not measured', '>= 40%', false);
    }
  }
} finally {
  closeLocalAgent();
}

const trellis = await benchTrellis();
const trellisRate = median(trellis.runsPerSec);
console.log(`trellis: ${trellisRate.toFixed(1)} runs/s median of ${ROUNDS} rounds (coordinator on PostgreSQL -> 1 worker process)`);
const totals = trellis.latencies.map((s) => s.total);
const p50 = percentile(totals, 50);
console.log(`trellis: enqueue-to-step-start p50 ${p50.toFixed(1)} ms, p99 ${percentile(totals, 99).toFixed(1)} ms (${LATENCY_SAMPLES} sequential runs)`);
target('worker enqueue-to-step-start p50', `${p50.toFixed(1)} ms`, '< 10 ms', p50 < 10);
const stage = (pick: (s: LatencySample) => number): string => percentile(trellis.latencies.map(pick), 50).toFixed(1);
console.log(`trellis: stage medians: enqueue -> handed to worker ${stage((s) => s.toDispatch)} ms, -> acknowledged ${stage((s) => s.toAck)} ms, -> step started ${stage((s) => s.toStep)} ms`);

const dagu = await measureDagu({ runs: 120, localRuns: LOCAL_RUNS, log: (line) => console.log(`  dagu: ${line}`) });
for (const note of dagu.notes) console.log(`  dagu note: ${note}`);
console.log(`dagu ${dagu.version}: ${dagu.localRunsPerSec.toFixed(1)} runs/s local, ${dagu.workerRunsPerSec.toFixed(1)} runs/s through its coordinator -> 1 worker (median of ${WORKER_BATCHES} batches of 60)` +
  (dagu.enqueueToStartP50Ms !== undefined ? `, enqueue-to-start p50 ${dagu.enqueueToStartP50Ms.toFixed(0)} ms, p99 ${(dagu.enqueueToStartP99Ms ?? 0).toFixed(0)} ms` : ''));
if (dagu.workerRunsPerSec > 0) {
  const ratio = trellisRate / dagu.workerRunsPerSec;
  target('worker runs/s vs Dagu', `${ratio.toFixed(1)}x`, '>= 10x', ratio >= 10);
}
for (const figures of local) {
  const rate = median(figures.rounds.map((r) => r.runsPerSec));
  const ratio = dagu.localRunsPerSec > 0 ? rate / dagu.localRunsPerSec : 0;
  console.log(`local ${figures.backend}: ${rate.toFixed(1)} runs/s, Dagu local ${dagu.localRunsPerSec.toFixed(1)} runs/s (${LOCAL_RUNS} runs, its bench's 8 submitters)`);
  target(`local runs/s vs Dagu, ${figures.backend}`, dagu.localRunsPerSec > 0 ? `${ratio.toFixed(1)}x` : 'Dagu not measured', '>= 10x', ratio >= 10);
}
