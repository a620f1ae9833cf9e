// `trellis server` as a child process, from source, for tests of what only a real process
// shows: exit codes, signals, a crash. Each test file keeps one ServerProcesses and calls
// cleanup() in its `after`.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import pg from 'pg';

const root = resolve(import.meta.dirname, '../../../..');
const serverUrl = process.env.TRELLIS_TEST_DATABASE_URL;

/** PGlite's first start on a busy 2-core machine has taken up to a minute. */
const START_TIMEOUT_MS = 120_000;

export interface StartedServer {
  child: ChildProcess;
  output: () => string;
}

async function sql(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/**
 * A port for a server process to listen on, picked below Linux's ephemeral range (32768-60999):
 * a port in that range can be taken between the pick and the listen by any outgoing connection or
 * any `listen(0)` of the tests running beside it (CI once failed with EADDRINUSE on 37612).
 */
export function serverPort(): number {
  return 20_000 + Math.floor(Math.random() * 12_000);
}

export class ServerProcesses {
  readonly children: ChildProcess[] = [];
  /** The schema the processes share on the PostgreSQL test server (unused on PGlite). */
  readonly schema: string;
  private schemaMade = false;

  constructor(label: string, private readonly cwd: string) {
    this.schema = `t_${label}_${randomBytes(4).toString('hex')}`;
  }

  /** The database env of a server process: a fresh schema on the PostgreSQL test server, else none (PGlite under its data dir). */
  async databaseEnv(): Promise<Record<string, string>> {
    if (serverUrl === undefined) return {};
    if (!this.schemaMade) await sql(`CREATE SCHEMA IF NOT EXISTS "${this.schema}"`);
    this.schemaMade = true;
    const url = new URL(serverUrl);
    url.searchParams.set('options', `-c search_path=${this.schema}`);
    return { DATABASE_URL: url.toString() };
  }

  /** `trellis server ARGS` with a minimal env plus `env`; its stdout and stderr are collected. */
  spawn(args: string[], env: Record<string, string>): StartedServer {
    const child = spawn(process.execPath, ['--conditions=source', '--import', import.meta.resolve('tsx'), join(root, 'packages/cli/src/main.ts'), 'server', ...args], {
      cwd: this.cwd,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? this.cwd, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.children.push(child);
    let output = '';
    child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    return { child, output: () => output };
  }

  /** Spawns a server and waits until its /health answers 200 on `port`. */
  async start(args: string[], env: Record<string, string>, port: number): Promise<StartedServer> {
    const server = this.spawn([...args, '--port', String(port)], env);
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (Date.now() < deadline) {
      if (server.child.exitCode !== null) throw new Error(`server exited: ${server.output()}`);
      try {
        if ((await fetch(`http://127.0.0.1:${port}/api/v1/health`)).ok) return server;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    server.child.kill('SIGKILL');
    throw new Error(`server did not start within ${START_TIMEOUT_MS} ms: ${server.output()}`);
  }

  /** Kills what is still running and drops the schema. */
  async cleanup(): Promise<void> {
    for (const child of this.children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    if (this.schemaMade) await sql(`DROP SCHEMA IF EXISTS "${this.schema}" CASCADE`);
  }
}
