// What authentication costs per request: GET /dags with no auth (a coordinator in mode none),
// and with a login token (JWT), an API key and Basic credentials (a coordinator in builtin mode
// on the same database and DAGs), measured in one run, interleaved round by round.
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
const WARMUP_REQUESTS = 300;
const REQUESTS_PER_ROUND = 2_000;
const ROUNDS = 7;
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

function urlOf(b: Bench, variant: Variant): string {
  return `${(variant === 'no auth' ? b.open : b.guarded).apiUrl}/dags`;
}

/** `count` requests one after another; the elapsed milliseconds. */
async function burst(b: Bench, variant: Variant, count: number): Promise<number> {
  const url = urlOf(b, variant);
  const headers = b.headers[variant];
  const started = performance.now();
  for (let i = 0; i < count; i += 1) {
    const res = await fetch(url, { headers });
    const text = await res.text();
    if (!res.ok) throw new Error(`GET /dags with ${variant}: HTTP ${res.status} ${text.slice(0, 200)}`);
  }
  return performance.now() - started;
}

async function main(): Promise<void> {
  console.log(`auth benchmark (node ${process.version}, ${process.platform}; GET /dags over ${DAG_COUNT} DAGs, one request at a time)`);
  const b = await setUp();
  try {
    for (const variant of VARIANTS) await burst(b, variant, WARMUP_REQUESTS);
    const perRequest = new Map<Variant, number[]>(VARIANTS.map((v) => [v, []]));
    for (let round = 0; round < ROUNDS; round += 1) {
      // A different order each round, so no variant always runs right after the same other.
      const order = VARIANTS.map((_, i) => VARIANTS[(i + round) % VARIANTS.length] as Variant);
      for (const variant of order) perRequest.get(variant)?.push((await burst(b, variant, REQUESTS_PER_ROUND)) / REQUESTS_PER_ROUND);
    }
    const base = perRequest.get('no auth') ?? [];
    console.log(`  ${REQUESTS_PER_ROUND} requests per variant and round, median of ${ROUNDS} rounds (target: auth adds < ${ADDED_TARGET_MS} ms per request):`);
    for (const variant of VARIANTS) {
      const ms = perRequest.get(variant) ?? [];
      // Each round's figure is set against the same round's no-auth figure: rounds share their load.
      const added = median(ms.map((m, i) => m - (base[i] ?? m)));
      const verdict = variant === 'no auth' ? '' : `   added ${added.toFixed(3).padStart(6)} ms/request   ${added < ADDED_TARGET_MS ? 'PASS' : 'MISS'}`;
      console.log(`    ${variant.padEnd(8)} ${(1000 / median(ms)).toFixed(0).padStart(6)} requests/s   ${median(ms).toFixed(3)} ms/request${verdict}`);
    }
  } finally {
    await tearDown(b);
  }
}

await main();
