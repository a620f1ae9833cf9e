// Sub-DAG children of a run on the local executor go through the queue and admission like any
// run: a child whose queue has no free slot waits there, queued, with the reason, until a slot
// frees up.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openTestDb } from '@trellis/store/testing';
import { createSilentLogger, loadServerConfig, startCoordinator, type Coordinator } from '@trellis/coordinator';

// Two in-process children at once, in the parent's sub-run queue `fan/sub`.
const FAN = 'steps:\n  - name: fan\n    call: nap\n    parallel:\n      items: [a, b]\n      max_concurrent: 2\n---\nname: nap\nsteps:\n  - sleep 1.5\n';

interface ChildRow {
  dagRunId: string;
  status: number;
  workerId: string;
  dispatchTarget: string;
  queueName: string;
  startedAt: Date | null;
  finishedAt: Date | null;
}

let coordinator: Coordinator;
let cleanup: () => Promise<void>;
const dir = mkdtempSync(join(tmpdir(), 'trellis-sub-admission-'));

before(async () => {
  mkdirSync(join(dir, 'dags'));
  writeFileSync(join(dir, 'dags', 'fan.yaml'), FAN);
  const opened = await openTestDb('sub_runs_admission');
  cleanup = opened.cleanup;
  const config = loadServerConfig({ cwd: dir, env: {}, overrides: { port: 0, grpcPort: -1, dagsDir: join(dir, 'dags'), dataDir: join(dir, 'data'), timezone: 'UTC', shutdownGraceSec: 0 } });
  // A sub-run queue is unlimited unless a limit names it; the config file cannot (queue names
  // have no `/`), so the test gives one to the loaded config: one child at a time.
  config.queues.push({ name: 'fan/sub', maxConcurrency: 1 });
  coordinator = await startCoordinator(config, createSilentLogger(), { watch: false, checkResponses: true, db: opened.db });
});

after(async () => {
  await coordinator.close();
  await cleanup();
  rmSync(dir, { recursive: true, force: true });
});

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(coordinator.apiUrl + path, { method, headers: { 'content-type': 'application/json' }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  const text = await res.text();
  return { status: res.status, json: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
}

function childrenOf(parentId: string): Promise<ChildRow[]> {
  return coordinator.db.query<ChildRow>(
    `SELECT dag_run_id AS "dagRunId", status, worker_id AS "workerId", dispatch_target AS "dispatchTarget", queue_name AS "queueName",
       started_at AS "startedAt", finished_at AS "finishedAt"
     FROM runs WHERE parent_dag_run_id = $1 ORDER BY id`,
    [parentId],
  );
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('a local sub-DAG child waits in its queue while the queue is full, then runs once a slot frees up', async () => {
  assert.equal((await call('POST', '/dags/fan/start', { dagRunId: 'f1' })).status, 200);
  const children = await until('one child running and one queued', async () => {
    const rows = await childrenOf('f1');
    return rows.length === 2 && rows.some((r) => r.status === 1) && rows.some((r) => r.status === 5) ? rows : undefined;
  });
  assert.deepEqual(children.map((c) => [c.dispatchTarget, c.queueName]), [['local', 'fan/sub'], ['local', 'fan/sub']]);
  const waiting = children.find((c) => c.status === 5);
  assert.ok(waiting);
  const queued = (await call('GET', `/dag-runs/nap/${waiting.dagRunId}`)).json.dagRun as { status: number; parentDAGRunId: string; conditions: Array<{ reason: string }> };
  assert.equal(queued.parentDAGRunId, 'f1');
  assert.equal(queued.conditions[0]?.reason, 'QueueConcurrencyLimitReached', 'it waits for a slot of its queue');

  const parent = await until('the parent to end', async () => {
    const run = (await call('GET', '/dag-runs/fan/f1')).json.dagRun as { status: number } | undefined;
    return run !== undefined && [2, 3, 4].includes(run.status) ? run : undefined;
  });
  assert.equal(parent.status, 4);
  const [first, second] = (await childrenOf('f1')).sort((a, b) => Number(a.startedAt) - Number(b.startedAt));
  assert.ok(first && second);
  assert.deepEqual([first.status, second.status], [4, 4]);
  assert.ok(first.workerId.startsWith('local:') && second.workerId.startsWith('local:'), 'both ran on the local executor');
  assert.ok(Number(second.startedAt) >= Number(first.finishedAt), 'the second child started only once the first had finished');
});
