// What authentication costs per request: GET /dags with no auth (a coordinator in mode none),
// and with a login token (JWT), an API key and Basic credentials (a coordinator in builtin mode
// on the same database and DAGs), measured in one run, interleaved request by request.
//   npm run bench -w packages/coordinator
// PostgreSQL: TRELLIS_BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test; the
// benchmark works in a schema of its own and drops it at the end.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toError } from '@trellis/core';
import { openBenchDatabase, type BenchDatabase } from '@trellis/store/testing';
import { createSilentLogger, loadServerConfig, startCoordinator, type Coordinator, type RawServerConfig } from '@trellis/coordinator';

const DATABASE_URL = process.env.TRELLIS_BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const DAG_COUNT = 50;
const WARMUP_REQUESTS = 200;
const REQUESTS = 10_000;
/** The issue's target: authentication adds less than this per request. */
const ADDED_TARGET_MS = 0.3;
const PASSWORD = 'bench admin password';

type Variant = 'no auth' | 'JWT' | 'API key' | 'Basic';
const VARIANTS: Variant[] = ['no auth', 'JWT', 'API key', 'Basic'];

interface Bench {
  dir: string;
  bench: BenchDatabase;
  open: Coordinator;
  guarded: Coordinator;
  headers: Record<Variant, Record<string, string>>;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

async function postJson<T>(url: string, body: unknown, authorization?: string): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(authorization !== undefined ? { authorization } : {}) },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`POST ${url}: HTTP ${res.status} ${text.slice(0, 200)}`);
  return JSON.parse(text) as T;
}

async function start(bench: BenchDatabase, dir: string, overrides: RawServerConfig): Promise<Coordinator> {
  const config = loadServerConfig({
    cwd: dir,
    env: {},
    overrides: { port: 0, grpcPort: -1, dagsDir: join(dir, 'dags'), dataDir: join(dir, 'data'), timezone: 'UTC', accessLog: false, schedulerEnabled: false, ...overrides },
  });
  return startCoordinator(config, createSilentLogger(), { watch: false, db: bench.db });
}

async function setUp(): Promise<Bench> {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-auth-bench-'));
  mkdirSync(join(dir, 'dags'));
  for (let i = 0; i < DAG_COUNT; i += 1) writeFileSync(join(dir, 'dags', `dag-${i}.yaml`), `description: bench DAG ${i}\nsteps:\n  - echo ${i}\n`);
  let bench: BenchDatabase;
  try {
    bench = await openBenchDatabase(DATABASE_URL, 'auth');
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`cannot open ${DATABASE_URL} (is PostgreSQL running? set TRELLIS_BENCH_DATABASE_URL): ${toError(error).message}`);
  }
  console.log(`  database ${DATABASE_URL}, schema ${bench.schema}`);
  const started: Coordinator[] = [];
  try {
    const open = await start(bench, dir, { auth: { mode: 'none' }, coordinatorId: 'bench-open' });
    started.push(open);
    const guarded = await start(bench, dir, { auth: { mode: 'builtin' }, coordinatorId: 'bench-guarded' });
    started.push(guarded);
    const setup = await postJson<{ token: string }>(`${guarded.apiUrl}/auth/setup`, { username: 'admin', password: PASSWORD });
    const jwt = `Bearer ${setup.token}`;
    const { key } = await postJson<{ key: string }>(`${guarded.apiUrl}/api-keys`, { name: 'bench', role: 'viewer' }, jwt);
    const headers: Record<Variant, Record<string, string>> = {
      'no auth': {},
      JWT: { authorization: jwt },
      'API key': { authorization: `Bearer ${key}` },
      Basic: { authorization: `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}` },
    };
    return { dir, bench, open, guarded, headers };
  } catch (error) {
    for (const c of started.reverse()) await c.close();
    await bench.cleanup();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

async function tearDown(b: Bench): Promise<void> {
  await b.guarded.close();
  await b.open.close();
  await b.bench.cleanup();
  rmSync(b.dir, { recursive: true, force: true });
}

/** One GET /dags; its milliseconds, body read included. */
async function once(url: string, headers: Record<string, string>, variant: Variant): Promise<number> {
  const started = performance.now();
  const res = await fetch(url, { headers });
  const text = await res.text();
  if (!res.ok) throw new Error(`GET /dags with ${variant}: HTTP ${res.status} ${text.slice(0, 200)}`);
  return performance.now() - started;
}

/**
 * `cycles` requests per variant, one at a time, the variants taking turns request by request
 * (in a rotating order): a shared machine's load swings then reach every variant alike.
 */
async function interleaved(b: Bench, cycles: number): Promise<Map<Variant, number[]>> {
  const targets = VARIANTS.map((variant) => ({ variant, url: `${(variant === 'no auth' ? b.open : b.guarded).apiUrl}/dags`, headers: b.headers[variant] }));
  const times = new Map<Variant, number[]>(VARIANTS.map((v) => [v, []]));
  for (let cycle = 0; cycle < cycles; cycle += 1) {
    for (let i = 0; i < targets.length; i += 1) {
      const target = targets[(i + cycle) % targets.length] as (typeof targets)[number];
      times.get(target.variant)?.push(await once(target.url, target.headers, target.variant));
    }
  }
  return times;
}

const mean = (values: number[]): number => values.reduce((a, v) => a + v, 0) / Math.max(1, values.length);

async function main(): Promise<void> {
  console.log(`auth benchmark (node ${process.version}, ${process.platform}; GET /dags over ${DAG_COUNT} DAGs, one request at a time)`);
  const b = await setUp();
  try {
    await interleaved(b, WARMUP_REQUESTS);
    const times = await interleaved(b, REQUESTS);
    const base = median(times.get('no auth') ?? []);
    console.log(`  ${REQUESTS} requests per variant, taking turns request by request (target: auth adds < ${ADDED_TARGET_MS} ms per request, median against median):`);
    for (const variant of VARIANTS) {
      const ms = times.get(variant) ?? [];
      const added = median(ms) - base;
      const verdict = variant === 'no auth' ? '' : `   added ${added.toFixed(3).padStart(6)} ms/request   ${added < ADDED_TARGET_MS ? 'PASS' : 'MISS'}`;
      console.log(`    ${variant.padEnd(8)} ${(1000 / mean(ms)).toFixed(0).padStart(6)} requests/s   median ${median(ms).toFixed(3)} ms${verdict}`);
    }
  } finally {
    await tearDown(b);
  }
}

await main();
