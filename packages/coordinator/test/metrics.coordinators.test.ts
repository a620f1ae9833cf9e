// Two coordinators on one database: the gauges of the shared database (runs, queues, workers)
// come from the scheduler leader only, so a dashboard's sum() over both counts each run once;
// when the leader stops, the other takes over the export with the lease.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openTestDb } from '@trellis/store/testing';
import { createSilentLogger, loadServerConfig, startCoordinator, type Coordinator } from '@trellis/coordinator';

const DATABASE_GAUGES = ['svc_dag_runs_currently_running', 'svc_dag_runs_queued_total', 'svc_dag_runs_total', 'svc_queue_depth', 'svc_queue_running', 'svc_workers_registered', 'svc_worker_info'];

let dir: string;
let cleanup: () => Promise<void>;
const coordinators = new Map<string, Coordinator>();

async function startOne(id: string, db: Awaited<ReturnType<typeof openTestDb>>['db']): Promise<Coordinator> {
  const config = loadServerConfig({
    cwd: dir,
    env: {},
    overrides: { port: 0, grpcPort: 0, dagsDir: join(dir, 'dags'), dataDir: join(dir, `data-${id}`), timezone: 'UTC', coordinatorId: id, schedulerLeaseTtlMs: 600 },
  });
  const coordinator = await startCoordinator(config, createSilentLogger(), { watch: false, db, checkResponses: true });
  coordinators.set(id, coordinator);
  return coordinator;
}

/** Samples of one metric: label text (or '') to value. */
function samples(text: string, name: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const match of text.matchAll(/^([a-z_]+)(\{[^}]*\})? (\S+)$/gm)) {
    if (match[1] === name) found.set(match[2] ?? '', Number(match[3]));
  }
  return found;
}

async function scrape(coordinator: Coordinator): Promise<string> {
  const res = await fetch(`${coordinator.apiUrl}/metrics`);
  assert.equal(res.status, 200);
  return res.text();
}

async function leaderAmong(ids: string[], timeoutMs = 10_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const id of ids) {
      const text = await scrape(coordinators.get(id) as Coordinator);
      if (samples(text, 'svc_scheduler_running').get('') === 1) return id;
    }
    if (Date.now() > deadline) throw new Error(`no leader among ${ids.join(', ')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-two-'));
  mkdirSync(join(dir, 'dags'));
  // No worker has these labels: its run stays queued.
  writeFileSync(join(dir, 'dags', 'parked.yaml'), 'worker_selector:\n  pool: nowhere\nsteps:\n  - "true"\n');
  const opened = await openTestDb('metrics_two');
  cleanup = opened.cleanup;
  // On PostgreSQL each coordinator gets its own pool, as two processes would; PGlite is one session.
  const first = await startOne('coord-a', opened.db);
  await startOne('coord-b', opened.second !== undefined ? await opened.second() : opened.db);
  const res = await fetch(`${first.apiUrl}/dags/parked/enqueue`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"dagRunId": "parked-1"}' });
  assert.equal(res.status, 200);
});

after(async () => {
  for (const coordinator of coordinators.values()) await coordinator.close();
  await cleanup();
  rmSync(dir, { recursive: true, force: true });
});

describe('database-wide gauges with two coordinators', () => {
  test('only the scheduler leader exports them: summed over both, one queued run is one', async () => {
    const leader = await leaderAmong(['coord-a', 'coord-b']);
    const standby = leader === 'coord-a' ? 'coord-b' : 'coord-a';
    const texts = [await scrape(coordinators.get(leader) as Coordinator), await scrape(coordinators.get(standby) as Coordinator)];
    const total = (name: string, labels = '') => texts.reduce((sum, text) => sum + (samples(text, name).get(labels) ?? 0), 0);
    assert.equal(total('svc_dag_runs_queued_total'), 1);
    assert.equal(total('svc_queue_depth', '{queue="parked"}'), 1);
    assert.equal(total('svc_scheduler_running'), 1, 'one leader');
    const standbyText = texts[1] ?? '';
    for (const name of DATABASE_GAUGES) {
      assert.equal(samples(standbyText, name).size, 0, `the standby exports no sample of ${name}`);
      assert.match(standbyText, new RegExp(`^# TYPE ${name} gauge$`, 'm'), `${name} is still declared`);
    }
    assert.equal(samples(standbyText, 'svc_scheduler_running').get(''), 0);
    for (const name of ['svc_uptime_seconds', 'svc_dags_total']) assert.equal(samples(standbyText, name).size, 1, `the standby still exports ${name}`);
  });

  test('when the leader stops, the other coordinator takes over the export with the lease', async () => {
    const leader = await leaderAmong(['coord-a', 'coord-b']);
    const standby = leader === 'coord-a' ? 'coord-b' : 'coord-a';
    await coordinators.get(leader)?.close();
    coordinators.delete(leader);
    assert.equal(await leaderAmong([standby]), standby);
    const text = await scrape(coordinators.get(standby) as Coordinator);
    assert.equal(samples(text, 'svc_dag_runs_queued_total').get(''), 1);
  });
});
