// SIGTERM drains the coordinator's local runs as a worker drains its tasks: nothing new starts,
// running runs get shutdownGraceSec to finish, the rest are stopped with an error saying why.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunStatus } from '@trellis/core';
import { getRun, openDatabase } from '@trellis/store';
import { ServerProcesses, serverPort, type StartedServer } from './support/server-process.js';

const dir = mkdtempSync(join(tmpdir(), 'trellis-drain-'));
const serverUrl = process.env.TRELLIS_TEST_DATABASE_URL;
const servers = new ServerProcesses('drain', dir);
// Each run sleeps a unique value, to find its process.
const unique = (seconds: number): string => `${seconds}.${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}`;
const SHORT_SLEEP = unique(3);
const GRACE_SEC = 10;
const LONG_SLEEP = unique(40);

mkdirSync(join(dir, 'dags'));
/** A step that leaves a file named `started` as it begins, then sleeps. */
const startedFile = (sleep: string): string => join(dir, `started-${sleep}`);
const sleeper = (sleep: string): string => `steps:\n  - touch ${startedFile(sleep)} && sleep ${sleep}\n`;
writeFileSync(join(dir, 'dags', 'short.yaml'), sleeper(SHORT_SLEEP));
writeFileSync(join(dir, 'dags', 'long.yaml'), sleeper(LONG_SLEEP));
writeFileSync(join(dir, 'dags', 'later.yaml'), 'steps:\n  - echo too late\n');

after(async () => {
  await servers.cleanup();
  for (const sleep of [SHORT_SLEEP, LONG_SLEEP]) spawnSync('pkill', ['-f', `sleep ${sleep}`]);
  rmSync(dir, { recursive: true, force: true });
});

/** The run as the server left it in the database (read once the server is gone). */
async function storedRun(dataDir: string, dagName: string, dagRunId: string) {
  const db = await openDatabase(serverUrl !== undefined ? { databaseUrl: serverUrl, schema: servers.schema } : { dataDir });
  try {
    return await getRun(db, dagName, dagRunId);
  } finally {
    await db.close();
  }
}

function startServer(env: Record<string, string>, port: number, dataDir: string): Promise<StartedServer> {
  return servers.start(['--dags-dir', join(dir, 'dags'), '--data-dir', dataDir, '--grpc-port', '0'], env, port);
}

async function startRun(port: number, dag: string, dagRunId: string): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${port}/api/v1/dags/${dag}/start`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ dagRunId }) });
  assert.equal(res.status, 200);
}

/**
 * Waits until each step's process has started (its file is there). A step shows Running as it
 * is handed to the spawner process, which on a loaded machine starts it seconds later: waiting
 * for the status, the short step sometimes did not end within the grace.
 */
async function waitStepsStarted(server: StartedServer, ...sleeps: string[]): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (sleeps.every((sleep) => existsSync(startedFile(sleep)))) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`step processes never started: ${sleeps.filter((s) => !existsSync(startedFile(s))).join(', ')}\n${server.output()}`);
}

/** The server's exit status, or a failure naming its output if it has not exited within `ms`. */
async function exitStatus(server: StartedServer, exited: Promise<number | null>, ms: number): Promise<number | null> {
  const timedOut = Symbol('timed out');
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([exited, new Promise<typeof timedOut>((r) => (timer = setTimeout(() => r(timedOut), ms)))]);
  clearTimeout(timer);
  if (code === timedOut) assert.fail(`the server had not exited ${ms / 1000} s after the signal:\n${server.output()}`);
  return code;
}

function processRunning(pattern: string): boolean {
  return spawnSync('pgrep', ['-f', pattern]).status === 0;
}

test('SIGTERM: a run that ends within the grace succeeds, a longer one is stopped with a clear error, the process exits 0', { timeout: 240_000 }, async () => {
  const port = serverPort();
  const dataDir = join(dir, 'data-drain');
  const server = await startServer({ ...(await servers.databaseEnv()), SVC_SHUTDOWN_GRACE_SEC: String(GRACE_SEC) }, port, dataDir);
  await startRun(port, 'short', 's1');
  await startRun(port, 'long', 'l1');
  await waitStepsStarted(server, SHORT_SLEEP, LONG_SLEEP);
  const exited = new Promise<number | null>((r) => server.child.once('exit', (code) => r(code)));
  const termAt = Date.now();
  server.child.kill('SIGTERM');
  // While draining, the API still answers; a run started now waits in its queue for the next start.
  await new Promise((r) => setTimeout(r, 300));
  await startRun(port, 'later', 'q1');
  const code = await exitStatus(server, exited, 90_000);
  const tookMs = Date.now() - termAt;
  assert.equal(code, 0, `exit status 0:\n${server.output()}`);
  assert.ok(tookMs >= GRACE_SEC * 1000 && tookMs < GRACE_SEC * 1000 + 14_000, `exited ${tookMs} ms after SIGTERM, after the ${GRACE_SEC} s grace:\n${server.output()}`);
  const short = await storedRun(dataDir, 'short', 's1');
  assert.equal(short?.status, RunStatus.Success, `the short run finished: ${JSON.stringify(short)}\n${server.output()}`);
  const long = await storedRun(dataDir, 'long', 'l1');
  assert.equal(long?.status, RunStatus.Aborted, `the long run was stopped: ${JSON.stringify(long)}`);
  assert.equal(long.error, `the coordinator shut down and the run did not finish within the shutdown grace (${GRACE_SEC}s)`);
  assert.equal(processRunning(`sleep ${LONG_SLEEP}`), false, "the long run's step process is gone");
  assert.equal((await storedRun(dataDir, 'later', 'q1'))?.status, RunStatus.Queued, 'nothing new started during the drain');
});

test('a second signal cuts the grace short: local runs are stopped at once', { timeout: 240_000 }, async () => {
  const port = serverPort();
  const dataDir = join(dir, 'data-abort');
  const server = await startServer({ ...(await servers.databaseEnv()), SVC_SHUTDOWN_GRACE_SEC: '120' }, port, dataDir);
  // The first test's long step left it.
  rmSync(startedFile(LONG_SLEEP), { force: true });
  await startRun(port, 'long', 'l2');
  await waitStepsStarted(server, LONG_SLEEP);
  const exited = new Promise<number | null>((r) => server.child.once('exit', (code) => r(code)));
  const termAt = Date.now();
  server.child.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 500));
  server.child.kill('SIGINT');
  assert.equal(await exitStatus(server, exited, 90_000), 0, server.output());
  assert.ok(Date.now() - termAt < 15_000, 'well within the 120 s grace');
  const long = await storedRun(dataDir, 'long', 'l2');
  assert.equal(long?.status, RunStatus.Aborted);
  assert.equal(long.error, 'the coordinator was told to stop at once');
  assert.equal(processRunning(`sleep ${LONG_SLEEP}`), false);
});
