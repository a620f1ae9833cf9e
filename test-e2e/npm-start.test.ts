// `npm start` must hand signals to the server: SIGTERM to npm used to kill only the shell
// between them, leaving the server running under PID 1 with the port still bound.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort, waitFor } from './support/cluster.js';

const ROOT = resolve(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'trellis-npm-start-'));
mkdirSync(join(dir, 'dags'));
const started: number[] = [];

after(() => {
  for (const pid of started) if (alive(pid)) process.kill(pid, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Every process below `pid` (npm, the shell it may run, the server). */
function descendants(pid: number): number[] {
  const out = spawnSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' }).stdout;
  const children = out.split('\n').map((s) => Number(s.trim())).filter((n) => n > 0);
  return children.flatMap((child) => [child, ...descendants(child)]);
}

test('npm start, then SIGTERM to npm: the server stops and frees its port', { timeout: 240_000 }, async () => {
  const port = await freePort();
  const npm = spawn('npm', ['start'], {
    cwd: ROOT,
    env: { ...process.env, SVC_PORT: String(port), SVC_GRPC_PORT: '-1', SVC_DATA_DIR: join(dir, 'data'), SVC_DAGS_DIR: join(dir, 'dags'), SVC_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  npm.stdout.on('data', (d: Buffer) => (output += d.toString()));
  npm.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const npmExited = new Promise<number | null>((r) => npm.once('exit', (code) => r(code)));
  assert.ok(npm.pid !== undefined);
  started.push(npm.pid);
  await waitFor('the server to answer', async () => ((await fetch(`http://127.0.0.1:${port}/api/v1/health`)).ok ? true : undefined), 180_000);
  const below = descendants(npm.pid);
  started.push(...below);
  assert.ok(below.length > 0, 'npm runs the server as a child');

  process.kill(npm.pid, 'SIGTERM');
  let npmGone = false;
  void npmExited.then(() => (npmGone = true));
  await waitFor('npm to exit', () => Promise.resolve(npmGone ? true : undefined), 30_000);
  await waitFor('every process npm started to end', () => Promise.resolve(below.every((pid) => !alive(pid)) ? true : undefined), 30_000);
  const refused = await fetch(`http://127.0.0.1:${port}/api/v1/health`).then(
    () => false,
    () => true,
  );
  assert.ok(refused, `nothing listens on ${port} any more:\n${output}`);
});
