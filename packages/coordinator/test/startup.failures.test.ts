// A coordinator that cannot start must say why and exit non-zero at once, so compose and
// systemd restart it; before, a port in use left it alive forever with nothing listening.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ServerProcesses } from './support/server-process.js';

const dir = mkdtempSync(join(tmpdir(), 'trellis-startup-'));
mkdirSync(join(dir, 'dags'));
const serverUrl = process.env.TRELLIS_TEST_DATABASE_URL;
const servers = new ServerProcesses('startup', dir);
const holders: Server[] = [];
/** After the line that names the cause, the process must be gone this soon. */
const EXIT_AFTER_ERROR_MS = 5000;

after(async () => {
  await servers.cleanup();
  await Promise.all(holders.map((h) => new Promise((r) => h.close(r))));
  rmSync(dir, { recursive: true, force: true });
});

/** A port some other process holds. */
async function takenPort(): Promise<number> {
  const holder = createServer();
  holders.push(holder);
  await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
  return (holder.address() as { port: number }).port;
}

interface Outcome {
  code: number | null;
  /** The logged start-up error. */
  error: { message?: string; code?: string; cause?: { message?: string; code?: string } };
  /** From the error line to the process's exit. */
  exitAfterMs: number;
}

/** Runs `trellis server` with its own data directory; resolves when it exits (or fails the test after 60 s). */
async function startFailing(args: string[], env: Record<string, string> = {}): Promise<Outcome> {
  const dataDir = join(dir, `data-${randomBytes(4).toString('hex')}`);
  const { child, output } = servers.spawn(['--dags-dir', join(dir, 'dags'), '--data-dir', dataDir, ...args], { SVC_LOG_FORMAT: 'json', ...env });
  let errorAt: number | undefined;
  child.stdout?.on('data', () => {
    if (errorAt === undefined && output().includes('the coordinator could not start')) errorAt = Date.now();
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`still running 60 s after start:\n${output()}`)), 60_000);
    child.once('exit', (c) => {
      clearTimeout(timer);
      resolve(c);
    });
  });
  const line = output().split('\n').find((l) => l.includes('the coordinator could not start'));
  assert.ok(line !== undefined && errorAt !== undefined, `no start-up error was logged:\n${output()}`);
  return { code, error: (JSON.parse(line) as { error: Outcome['error'] }).error, exitAfterMs: Date.now() - errorAt };
}

function assertExitedPromptly(outcome: Outcome): void {
  assert.equal(outcome.code, 1, 'exit status 1');
  assert.ok(outcome.exitAfterMs < EXIT_AFTER_ERROR_MS, `exited ${outcome.exitAfterMs} ms after logging the error`);
}

describe('start-up failures end the process, naming the cause', () => {
  test('the HTTP port is in use', { timeout: 90_000 }, async () => {
    const port = await takenPort();
    const outcome = await startFailing(['--port', String(port), '--grpc-port', '0'], await servers.databaseEnv());
    assertExitedPromptly(outcome);
    assert.equal(outcome.error.message, `cannot listen for HTTP on 127.0.0.1:${port}: address already in use`);
    assert.equal(outcome.error.cause?.code, 'EADDRINUSE');
  });

  test('the gRPC port is in use', { timeout: 90_000 }, async () => {
    const port = await takenPort();
    const outcome = await startFailing(['--port', '0', '--grpc-port', String(port)], await servers.databaseEnv());
    assertExitedPromptly(outcome);
    assert.match(String(outcome.error.message), new RegExp(`^cannot listen for workers on 127\\.0\\.0\\.1:${port}: .*address already in use`));
  });

  test('the database does not exist', { timeout: 90_000 }, async () => {
    // The test server when there is one; without one the connection is refused, which must end the process just as well.
    const url = new URL(serverUrl ?? 'postgres://postgres@127.0.0.1:5432/test');
    url.pathname = `/trellis_missing_${randomBytes(4).toString('hex')}`;
    url.search = '';
    const outcome = await startFailing(['--port', '0', '--grpc-port', '0', '--database-url', url.toString()]);
    assertExitedPromptly(outcome);
    assert.match(String(outcome.error.message), /^cannot open the PostgreSQL database: /);
    if (serverUrl !== undefined) {
      assert.match(String(outcome.error.message), /database "trellis_missing_[0-9a-f]+" does not exist/);
      assert.equal(outcome.error.cause?.code, '3D000');
    } else {
      assert.ok(outcome.error.cause?.code !== undefined, `the cause carries its code: ${JSON.stringify(outcome.error)}`);
    }
  });

  test('gRPC beyond loopback without a worker token', { timeout: 90_000 }, async () => {
    const outcome = await startFailing(['--port', '0', '--grpc-port', '0', '--grpc-host', '0.0.0.0']);
    assertExitedPromptly(outcome);
    assert.match(String(outcome.error.message), /beyond loopback: set workerToken/);
  });
});
