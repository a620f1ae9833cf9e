// Real processes for the cluster tests: a coordinator (`trellis server`) on the machine's
// PostgreSQL, in a database of its own, and worker daemons (`trellis worker`), each a
// separate OS process started from the built CLI and stopped by PID.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

const ROOT = resolve(import.meta.dirname, '..', '..');
const CLI = join(ROOT, 'packages', 'cli', 'dist', 'main.js');
export const DATABASE_URL = process.env.TRELLIS_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolvePort(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number, everyMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export interface Proc {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

// Benches profile the processes they start: `TRELLIS_CPU_PROF_DIR=<dir>` writes a V8 CPU profile of
// each `trellis server` there (Node refuses --cpu-prof in NODE_OPTIONS).
const CPU_PROF_DIR = process.env.TRELLIS_CPU_PROF_DIR;

/** `trellis <args>` from the built CLI, its output kept; `env` replaces the inherited environment. */
export function startProcess(args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Proc {
  const profile = CPU_PROF_DIR !== undefined && args[0] === 'server' ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF_DIR}`] : [];
  const child = spawn(process.execPath, [...profile, CLI, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, output: () => out, exited };
}

export async function stopProcess(proc: Proc, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (proc.child.exitCode !== null || proc.child.signalCode !== null) return;
  proc.child.kill(signal);
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), 15_000);
  await proc.exited;
  clearTimeout(timer);
}

/** A coordinator besides the cluster's first one, with its own directory, as if on a host of its own. */
export interface Peer {
  name: string;
  /** Holds its trellis.yaml, dags/ (the cluster's DAG files, copied) and data/; nothing is shared with the others. */
  dir: string;
  proc: Proc;
  api: string;
  /** host:port of its gRPC server, for `trellis worker --coordinator`. */
  grpcAddress: string;
}

export interface Answer {
  status: number;
  json: Record<string, unknown>;
}

/** One REST call to the coordinator at `api`. */
export async function callAt(api: string, method: string, path: string, body?: unknown, authorization?: string): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(authorization !== undefined ? { authorization } : {}) };
  const res = await fetch(api + path, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  const text = await res.text();
  return { status: res.status, json: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
}

export interface ClusterOptions {
  dags: Record<string, string>;
  /** Extra lines of the coordinator's YAML config. */
  config?: string;
  token?: string;
  /** Extra `trellis server` flags (TLS files, ...). */
  serverArgs?: string[];
  /** The PostgreSQL server the cluster's database is made on (default: the machine's, DATABASE_URL). */
  server?: string;
}

export class Cluster {
  readonly dir = mkdtempSync(join(tmpdir(), 'trellis-e2e-'));
  readonly token: string;
  readonly database = `trellis_e2e_${randomBytes(5).toString('hex')}`;
  readonly databaseUrl: string;
  coordinator: Proc | undefined;
  workers = new Map<string, Proc>();
  peers = new Map<string, Peer>();
  httpPort = 0;
  grpcPort = 0;
  /** The `Authorization` header `call` sends once the coordinator has auth on (a login token or an API key). */
  authorization: string | undefined;
  private readonly server: string;
  /** A pool, not one connection: it reconnects when a test restarts the database server. */
  private db: pg.Pool | undefined;
  private created = false;

  constructor(private readonly options: ClusterOptions) {
    this.token = options.token ?? 'e2e-secret-token';
    this.server = options.server ?? DATABASE_URL;
    const url = new URL(this.server);
    url.pathname = `/${this.database}`;
    this.databaseUrl = url.toString();
    this.writeCoordinatorDir(this.dir);
  }

  /** trellis.yaml and dags/ of one coordinator, its data directory beside them. */
  private writeCoordinatorDir(dir: string): void {
    mkdirSync(join(dir, 'dags'), { recursive: true });
    for (const [name, yaml] of Object.entries(this.options.dags)) writeFileSync(join(dir, 'dags', `${name}.yaml`), yaml);
    writeFileSync(join(dir, 'trellis.yaml'), `dagsDir: ./dags\ndataDir: ./data\nlogFormat: json\n${this.options.config ?? ''}`);
  }

  /** The first coordinator's gRPC address. */
  get grpcAddress(): string {
    return `127.0.0.1:${this.grpcPort}`;
  }

  get api(): string {
    return `http://127.0.0.1:${this.httpPort}/api/v1`;
  }

  async start(): Promise<void> {
    await this.admin(`CREATE DATABASE "${this.database}"`);
    this.created = true;
    this.httpPort = await freePort();
    this.grpcPort = await freePort();
    await this.startCoordinator();
    this.db = new pg.Pool({ connectionString: this.databaseUrl, max: 2 });
    // A connection cut by a database restart is dropped from the pool, not thrown at the test.
    this.db.on('error', () => undefined);
  }

  private async admin(statement: string): Promise<void> {
    const client = new pg.Client({ connectionString: this.server });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  }

  async startCoordinator(): Promise<void> {
    this.coordinator = await this.startCoordinatorProcess(this.httpPort, this.grpcPort);
  }

  /** One more coordinator process on the same database (ports of its own); the caller stops it. */
  async startCoordinatorProcess(httpPort: number, grpcPort: number, dir = this.dir): Promise<Proc> {
    const proc = startProcess(
      [
        'server', '--config', join(dir, 'trellis.yaml'), '--port', String(httpPort), '--grpc-port', String(grpcPort),
        '--worker-token', this.token, '--database-url', this.databaseUrl, ...(this.options.serverArgs ?? []),
      ],
      dir,
    );
    await waitFor('the coordinator to answer', async () => ((await fetch(`http://127.0.0.1:${httpPort}/api/v1/health`)).ok ? true : undefined), 30_000);
    return proc;
  }

  /**
   * A coordinator with a directory of its own (data, DAGs, config) on the cluster's database;
   * stopped with the cluster.
   */
  async startPeer(name: string): Promise<Peer> {
    const dir = join(this.dir, `coordinator-${name}`);
    this.writeCoordinatorDir(dir);
    const [httpPort, grpcPort] = [await freePort(), await freePort()];
    const peer = { name, dir, proc: await this.startCoordinatorProcess(httpPort, grpcPort, dir), api: `http://127.0.0.1:${httpPort}/api/v1`, grpcAddress: `127.0.0.1:${grpcPort}` };
    this.peers.set(name, peer);
    return peer;
  }

  /**
   * The two-coordinator set-up: a peer B, and three workers registered, `worker-a` (pool=a) with
   * A only, `worker-b` (pool=b) with B only, `worker-both` (pool=both) with A then B.
   */
  async startPeerWithWorkers(name = 'b'): Promise<Peer> {
    const peer = await this.startPeer(name);
    this.startWorker('worker-a', 'pool=a', { coordinators: [this.grpcAddress] });
    this.startWorker('worker-b', 'pool=b', { coordinators: [peer.grpcAddress] });
    this.startWorker('worker-both', 'pool=both', { coordinators: [this.grpcAddress, peer.grpcAddress] });
    await this.workerReady('worker-a');
    await this.workerReady('worker-b', peer.api);
    await this.workerReady('worker-both');
    return peer;
  }

  /** `coordinators`: the gRPC addresses it is given, in order (default: the first coordinator's). */
  startWorker(id: string, labels: string, options: { token?: string; pollers?: number; args?: string[]; coordinators?: string[] } = {}): Proc {
    const workDir = join(this.dir, `work-${id}`);
    const proc = startProcess(
      ['worker', '--coordinator', (options.coordinators ?? [this.grpcAddress]).join(','), '--id', id, '--labels', labels, '--token', options.token ?? this.token, '--pollers', String(options.pollers ?? 4), '--work-dir', workDir, ...(options.args ?? [])],
      this.dir,
    );
    this.workers.set(id, proc);
    return proc;
  }

  /** Waits until the coordinator (the first one, or the one at `api`) lists the worker as healthy. */
  async workerReady(id: string, api = this.api): Promise<void> {
    await waitFor(`worker ${id} to register`, async () => {
      const body = (await callAt(api, 'GET', '/workers', undefined, this.authorization)).json as { workers?: Array<{ id: string; health_status: string }> };
      return body.workers?.some((w) => w.id === id && w.health_status === 'WORKER_HEALTH_STATUS_HEALTHY') === true ? true : undefined;
    }, 30_000);
  }

  async killCoordinator(): Promise<void> {
    if (this.coordinator !== undefined) await stopProcess(this.coordinator, 'SIGKILL');
  }

  /** SIGTERM: the worker stops polling and lets its running tasks finish. */
  async terminateWorker(id: string): Promise<number | null> {
    const proc = this.workers.get(id);
    if (proc === undefined) return null;
    proc.child.kill('SIGTERM');
    return proc.exited;
  }

  /** What the worker started last with this id printed. */
  workerOutput(id: string): string {
    return this.workers.get(id)?.output() ?? '';
  }

  async killWorker(id: string): Promise<void> {
    const proc = this.workers.get(id);
    if (proc !== undefined) await stopProcess(proc, 'SIGKILL');
  }

  async call(method: string, path: string, body?: unknown): Promise<Answer> {
    return callAt(this.api, method, path, body, this.authorization);
  }

  async sql<T extends Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> {
    if (this.db === undefined) throw new Error('cluster not started');
    return (await this.db.query(text, params)).rows as T[];
  }

  async stop(): Promise<void> {
    await Promise.all([...this.workers.values()].map((w) => stopProcess(w)));
    await Promise.all([...this.peers.values()].map((p) => stopProcess(p.proc)));
    if (this.coordinator !== undefined) await stopProcess(this.coordinator);
    await this.db?.end();
    if (this.created) await this.admin(`DROP DATABASE IF EXISTS "${this.database}" WITH (FORCE)`);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
