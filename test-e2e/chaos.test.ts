// Chaos under continuous load: two workers with fixed ids are killed (-9) and restarted in
// turn, the coordinator is killed and restarted, and the PostgreSQL server (a cluster this test
// makes on a port of its own) is restarted. At the end every run is terminal and none is stuck
// (no step left Running either), none ran twice (each start appends its id to a ledger), the
// queue's limit was never exceeded, and /health told the truth throughout.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startThrowawayCluster, type ThrowawayCluster } from '@trellis/store/testing';
import { ARTIFACTS } from './support/artifacts.js';
import { Cluster, waitFor } from './support/cluster.js';

const TERMINAL = [2, 3, 4, 6, 8];
const LIMIT = 3;
const LABELS = 'pool=chaos';
const WORKERS = ['chaos-a', 'chaos-b'];
/** Debug logs: a report a worker could not deliver says so, which is what a stuck run needs explained. */
const WORKER_OPTIONS = { pollers: 2, args: ['--log-level', 'debug'] };
/** /health caches its database probe for a second; a probe of a stopped server takes a few hundred ms more. */
const HEALTH_SETTLE_MS = 2500;

let server: ThrowawayCluster | undefined;
let cluster: Cluster | undefined;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function the(c: Cluster | undefined): Cluster {
  if (c === undefined) throw new Error('cluster not started');
  return c;
}

before(async () => {
  server = await startThrowawayCluster();
  cluster = new Cluster({
    server: server.url,
    dags: {},
    config: `queues:\n  - name: chaos\n    maxConcurrency: ${LIMIT}\n`,
  });
  const ledger = join(cluster.dir, 'ledger.txt');
  writeFileSync(join(cluster.dir, 'dags', 'chaos.yaml'), `queue: chaos\nworker_selector:\n  pool: chaos\nsteps:\n  - name: work\n    command: echo "$DAG_RUN_ID" >> ${ledger} && sleep 0.3\n`);
  await cluster.start();
  for (const id of WORKERS) cluster.startWorker(id, LABELS, WORKER_OPTIONS);
  for (const id of WORKERS) await cluster.workerReady(id);
});

after(async () => {
  try {
    await cluster?.stop();
  } finally {
    await server?.destroy();
  }
});

/**
 * How the coordinator died, with its last words; undefined while it runs. A coordinator that died
 * leaves every run it had in flight Running, so a stuck run's story starts here.
 */
function coordinatorDeath(c: Cluster): string | undefined {
  const proc = c.coordinator;
  if (proc === undefined) return 'the coordinator was never started';
  if (proc.child.exitCode === null && proc.child.signalCode === null) return undefined;
  return `the coordinator exited (${proc.child.exitCode ?? proc.child.signalCode}):\n${proc.output().split('\n').slice(-25).join('\n')}`;
}

/** What the coordinator and the workers logged about these runs: a stuck run's story, for the failure message. */
function stuckRunLines(c: Cluster, ids: string[]): string {
  const mentions = (text: string) => text.split('\n').filter((line) => ids.some((id) => line.includes(`"${id}"`))).slice(-60).join('\n');
  const sources = [['coordinator', c.coordinator?.output() ?? ''], ...WORKERS.map((id) => [id, c.workerOutput(id)])];
  mkdirSync(ARTIFACTS, { recursive: true });
  for (const [name, text] of sources) writeFileSync(join(ARTIFACTS, `chaos-${name}.log`), text ?? '');
  const died = coordinatorDeath(c);
  return (died !== undefined ? `${died}\n` : '') + sources.map(([name, text]) => `--- ${name} (all of it in test-e2e/.artifacts/chaos-${name}.log)\n${mentions(text ?? '')}`).join('\n');
}

interface HealthSample {
  sentAt: number;
  answeredAt: number;
  /** HTTP status, or 0 when nothing answered (the coordinator was down). */
  status: number;
}

/** A database outage, for judging what /health said: down for sure from `from` to `restarting`, up again by `up`. */
interface Outage {
  from: number;
  restarting: number;
  up: number;
}

test('workers and the coordinator killed and restarted, PostgreSQL restarted, under load: every run ends once, limits hold, /health tells the truth', async (t) => {
  const c = the(cluster);
  const pgServer = server;
  assert.ok(pgServer);
  const started = Date.now();
  let running = true;

  // Load: a run every 250 ms, whatever state the cluster is in (enqueues fail while it is down).
  const attempted: string[] = [];
  const accepted: string[] = [];
  const load = (async () => {
    for (let i = 0; running; i += 1) {
      const id = `c${i}`;
      attempted.push(id);
      const answer = await c.call('POST', '/dags/chaos/enqueue', { dagRunId: id }).catch(() => undefined);
      if (answer?.status === 200) accepted.push(id);
      await sleep(250);
    }
  })();

  // The queue's limit, sampled from the database whenever it answers.
  let maxRunning = 0;
  let limitSamples = 0;
  const limits = (async () => {
    while (running) {
      const rows = await c.sql<{ n: number }>("SELECT count(*)::int AS n FROM runs WHERE queue_name = 'chaos' AND status IN (1, 7)").catch(() => undefined);
      if (rows !== undefined) {
        maxRunning = Math.max(maxRunning, rows[0]?.n ?? 0);
        limitSamples += 1;
      }
      await sleep(50);
    }
  })();

  // What /health says, every 200 ms.
  const health: HealthSample[] = [];
  const healthProbe = (async () => {
    while (running) {
      const sentAt = Date.now();
      const status = await fetch(`${c.api}/health`, { signal: AbortSignal.timeout(5000) }).then((r) => r.status, () => 0);
      health.push({ sentAt, answeredAt: Date.now(), status });
      await sleep(200);
    }
  })();

  const outages: Outage[] = [];
  try {
    await sleep(4000);
    // Each worker killed and restarted with the same id, in turn, three times.
    for (let round = 0; round < 3; round += 1) {
      for (const id of WORKERS) {
        await c.killWorker(id);
        await sleep(500 + 500 * round);
        c.startWorker(id, LABELS, WORKER_OPTIONS);
        await sleep(3000);
      }
    }
    await c.killCoordinator();
    await sleep(2000);
    await c.startCoordinator();
    await sleep(4000);
    const from = Date.now();
    await pgServer.stop('fast');
    await sleep(4000);
    const restarting = Date.now();
    await pgServer.start();
    outages.push({ from, restarting, up: Date.now() });
    await sleep(5000);
  } finally {
    running = false;
    await Promise.all([load, limits, healthProbe]);
  }

  // The coordinator rode out the database restart: had it died, nothing would end its runs.
  assert.equal(coordinatorDeath(c), undefined);

  // Every run that exists ends, none stays running or queued.
  const chaosRuns = () => c.sql<{ id: string; status: number; error: string; worker: string }>("SELECT dag_run_id AS id, status, error, worker_id AS worker FROM runs WHERE dag_name = 'chaos'");
  const final = await waitFor('every run to end', async () => {
    const rows = await chaosRuns();
    return rows.every((r) => TERMINAL.includes(r.status)) ? rows : undefined;
  }, 90_000, 500).catch(async (error: unknown) => {
    // Which runs stuck, and where, is what a failure here needs to be understood.
    const stuck = (await chaosRuns()).filter((r) => !TERMINAL.includes(r.status));
    throw new Error(`${String(error)}; not ended: ${JSON.stringify(stuck.slice(0, 10))} (${stuck.length} in all)\n${stuckRunLines(c, stuck.slice(0, 3).map((r) => r.id))}`);
  });
  const elapsed = Date.now() - started;

  // Enough load went through for the test to mean something.
  const succeeded = final.filter((r) => r.status === 4);
  t.diagnostic(`runs ${final.length} (${accepted.length} of ${attempted.length} enqueues accepted), succeeded ${succeeded.length}, max running ${maxRunning}, /health samples ${health.length}, ${elapsed} ms`);
  assert.ok(accepted.length >= 100, `${accepted.length} enqueues accepted`);
  // None lost: every run whose enqueue was accepted exists (and ended, above).
  const recorded = new Set(final.map((r) => r.id));
  assert.deepEqual(accepted.filter((id) => !recorded.has(id)), [], 'accepted runs missing');
  assert.ok(succeeded.length >= 0.6 * final.length, `${succeeded.length} of ${final.length} runs succeeded`);
  // Runs that did not succeed were ended by the chaos, each with an error that says why.
  for (const run of final.filter((r) => r.status !== 4)) {
    assert.equal(run.status, 2, `run ${run.id}: ${run.error}`);
    assert.match(run.error, /^worker chaos-[ab] (no longer has this run|was lost)/, `run ${run.id}`);
  }

  // None ran twice; every success ran exactly once.
  const ledgerFile = join(c.dir, 'ledger.txt');
  const lines = existsSync(ledgerFile) ? readFileSync(ledgerFile, 'utf8').split('\n').filter((l) => l !== '') : [];
  const counts = new Map<string, number>();
  for (const line of lines) counts.set(line, (counts.get(line) ?? 0) + 1);
  assert.deepEqual([...counts].filter(([, n]) => n > 1), [], 'no run started twice');
  assert.deepEqual(succeeded.filter((r) => counts.get(r.id) !== 1).map((r) => r.id), [], 'every succeeded run ran once');

  // No step of an ended run is left Running.
  const stuck = await c.sql<{ id: string }>("SELECT r.dag_run_id AS id FROM runs r JOIN run_nodes n ON n.run_id = r.id WHERE r.dag_name = 'chaos' AND n.data->>'status' = '1'");
  assert.deepEqual(stuck, [], 'steps left running');

  assert.ok(limitSamples > 100, `sampled the queue ${limitSamples} times`);
  assert.ok(maxRunning <= LIMIT, `at most ${LIMIT} running at once, saw ${maxRunning}`);

  // /health: unhealthy while the database was down, healthy whenever it answered otherwise.
  const during = (s: HealthSample, o: Outage) => s.sentAt >= o.from + HEALTH_SETTLE_MS && s.answeredAt <= o.restarting;
  const near = (s: HealthSample, o: Outage) => s.answeredAt >= o.from && s.sentAt <= o.up + HEALTH_SETTLE_MS;
  const answered = health.filter((s) => s.status !== 0);
  const inOutage = answered.filter((s) => outages.some((o) => during(s, o)));
  assert.ok(inOutage.length >= 3, `/health asked ${inOutage.length} times while the database was down`);
  assert.deepEqual(inOutage.filter((s) => s.status !== 503), [], '/health said healthy while the database was down');
  const outside = answered.filter((s) => !outages.some((o) => near(s, o)));
  assert.ok(outside.length > 100, `/health asked ${outside.length} times while the database was up`);
  assert.deepEqual(outside.filter((s) => s.status !== 200), [], '/health said unhealthy while the database was up');

  // Both workers are back and healthy, and the whole test stayed within its time budget.
  for (const id of WORKERS) await c.workerReady(id);
  assert.ok(elapsed < 150_000, `the chaos and the drain took ${elapsed} ms`);
});
