import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServerProcesses, serverPort } from './support/server-process.js';

const dir = mkdtempSync(join(tmpdir(), 'trellis-crash-'));
const servers = new ServerProcesses('crash', dir);
// Runs in flight at the crash sleep this long (a unique value, to find their orphaned processes).
const LONG_SLEEP = `31.${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}`;

after(async () => {
  await servers.cleanup();
  // kill -9 of the coordinator cannot reach the steps' process groups; clean them up here.
  spawn('pkill', ['-f', `sleep ${LONG_SLEEP}`]);
  rmSync(dir, { recursive: true, force: true });
});

async function startServer(env: Record<string, string>, port: number): Promise<ChildProcess> {
  return (await servers.start(['--config', join(dir, 'trellis.yaml')], env, port)).child;
}

type Run = { dagRunId: string; status: number; error: string };

async function runs(port: number, name = 'sleeper'): Promise<Run[]> {
  const res = await fetch(`http://127.0.0.1:${port}/api/v1/dag-runs?name=${name}&limit=500`);
  return ((await res.json()) as { dagRuns: Run[] }).dagRuns;
}

/** A run's details: list items carry no `error` (the contract's summary has none). */
async function details(port: number, name: string, dagRunId: string): Promise<Run> {
  const res = await fetch(`http://127.0.0.1:${port}/api/v1/dag-runs/${name}/${dagRunId}`);
  return ((await res.json()) as { dagRun: Run }).dagRun;
}

test('kill -9 with 50 local runs in flight: after a restart every run ends, none stays Running, the API answers; a failed parent takes its queued child with it', { timeout: 360_000 }, async () => {
  mkdirSync(join(dir, 'dags'));
  writeFileSync(join(dir, 'trellis.yaml'), 'dagsDir: ./dags\ndataDir: ./data\ngrpcPort: 0\nlogFormat: json\nqueues:\n  - name: crash\n    maxConcurrency: 40\n');
  writeFileSync(join(dir, 'sleep-seconds'), LONG_SLEEP);
  writeFileSync(join(dir, 'dags', 'sleeper.yaml'), `queue: crash\nsteps:\n  - sleep $(cat ${join(dir, 'sleep-seconds')})\n`);
  // A local parent whose child waits for a worker nobody runs: the crash fails the parent, and its child must not run later.
  writeFileSync(join(dir, 'dags', 'parent.yaml'), 'steps:\n  - name: call\n    call: orphan\n    worker_selector:\n      pool: nobody\n');
  writeFileSync(join(dir, 'dags', 'orphan.yaml'), 'steps:\n  - echo never\n');
  const env = await servers.databaseEnv();
  const port = serverPort();
  const first = await startServer(env, port);
  for (let i = 0; i < 50; i += 1) {
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/dags/sleeper/start`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(res.status, 200);
  }
  let before: Run[] = [];
  for (let i = 0; i < 400; i += 1) {
    before = await runs(port);
    if (before.filter((r) => r.status === 1).length >= 40) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const runningAtKill = new Set(before.filter((r) => r.status === 1).map((r) => r.dagRunId));
  assert.equal(runningAtKill.size, 40, 'the queue limit of 40 runs was in flight');
  const started = await fetch(`http://127.0.0.1:${port}/api/v1/dags/parent/start`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"dagRunId":"p1"}' });
  assert.equal(started.status, 200);
  for (let i = 0; i < 200 && (await runs(port, 'orphan')).length === 0; i += 1) await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual((await runs(port, 'orphan')).map((r) => r.status), [5], 'the child is queued');
  first.kill('SIGKILL');
  await new Promise((r) => first.once('exit', r));
  // Runs still queued at the crash will run after the restart: let them be quick.
  writeFileSync(join(dir, 'sleep-seconds'), '0.1');

  await startServer(env, port);
  let after: Run[] = [];
  for (let i = 0; i < 300; i += 1) {
    after = await runs(port);
    if (after.length === 50 && after.every((r) => [2, 3, 4].includes(r.status))) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(after.length, 50, 'no run is lost');
  assert.ok(after.every((r) => [2, 3, 4].includes(r.status)), `every run ended: ${JSON.stringify(after.filter((r) => ![2, 3, 4].includes(r.status)))}`);
  for (const run of after.filter((r) => runningAtKill.has(r.dagRunId))) {
    assert.equal(run.status, 2, `a run cut off by the crash is failed: ${JSON.stringify(run)}`);
    assert.equal((await details(port, 'sleeper', run.dagRunId)).error, 'the coordinator stopped while this run was running');
  }
  const queuedAtKill = after.filter((r) => !runningAtKill.has(r.dagRunId));
  assert.equal(queuedAtKill.length, 10);
  assert.ok(queuedAtKill.every((r) => r.status === 4), 'runs still queued at the crash ran once, after the restart');
  const [parent] = await runs(port, 'parent');
  assert.equal(parent?.status, 2);
  const [orphan] = await runs(port, 'orphan');
  assert.equal(orphan?.status, 3, 'the queued child of a failed parent is aborted');
  assert.equal((await details(port, 'orphan', orphan?.dagRunId ?? 'missing')).error, 'parent run parent/p1 failed: the coordinator stopped while this run was running');
  assert.equal((await fetch(`http://127.0.0.1:${port}/api/v1/health`)).status, 200);
});
