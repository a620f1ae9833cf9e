// Repository sync: a pull of 1,000 DAG files from a real git smart-HTTP remote (git
// http-backend behind a token check, on loopback) into an empty coordinator, a pull with
// nothing new, and a pull after someone else changed all 1,000 files in one commit.
//   npm run bench -w packages/coordinator
// PGlite by default; TRELLIS_TEST_DATABASE_URL for PostgreSQL.
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openTestDb } from '@trellis/store/testing';
import { createSilentLogger, loadServerConfig, startCoordinator } from '@trellis/coordinator';
import { startGitHttpRemote } from '../test/support/git-http-server.js';
import { benchDag, percentile } from './bench-dags.js';

const DAG_COUNT = 1_000;
const NOTHING_NEW_ROUNDS = 5;
const fmt = (n: number): string => n.toLocaleString('en-US', { maximumFractionDigits: 0 });

const files = Object.fromEntries(Array.from({ length: DAG_COUNT }, (_, i) => benchDag(i)).map((dag) => [`${dag.fileName}.yaml`, dag.yaml]));
const remote = await startGitHttpRemote(files);
const root = mkdtempSync(join(tmpdir(), 'trellis-sync-bench-'));
const { db, cleanup } = await openTestDb('sync_bench');
const config = loadServerConfig({ cwd: root, env: {}, overrides: { port: 0, grpcPort: -1, dagsDir: join(root, 'dags'), dataDir: join(root, 'data'), timezone: 'UTC', shutdownGraceSec: 0, schedulerEnabled: false, secretsKey: randomBytes(32).toString('base64') } });
const coordinator = await startCoordinator(config, createSilentLogger(), { watch: false, db });

async function call(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(coordinator.apiUrl + path, { method, headers: { 'content-type': 'application/json', connection: 'close' }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  const json = (await res.json()) as Record<string, unknown>;
  if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

async function timedPull(expected: number): Promise<number> {
  const started = performance.now();
  const outcome = await call('POST', '/sync/pull');
  const ms = performance.now() - started;
  if (outcome.success !== true || (outcome.synced as string[]).length !== expected) throw new Error(`unexpected pull: ${JSON.stringify(outcome).slice(0, 300)}`);
  return ms;
}

try {
  await call('PUT', '/sync/config', { enabled: true, repository: remote.url, auth: { type: 'token', token: remote.token } });
  const first = await timedPull(DAG_COUNT);
  if (coordinator.index.size !== DAG_COUNT) throw new Error(`${coordinator.index.size} DAGs indexed after the pull`);
  const idle: number[] = [];
  for (let round = 0; round < NOTHING_NEW_ROUNDS; round++) idle.push(await timedPull(DAG_COUNT));
  const other = remote.clone('bench');
  for (const name of Object.keys(files)) other.write(name, `${files[name] ?? ''}# changed\n`);
  other.commitAndPush('change every DAG');
  const changed = await timedPull(DAG_COUNT);
  console.log(`sync pull, ${fmt(DAG_COUNT)} DAG files over loopback smart HTTP (${db.capabilities.name}):`);
  console.log(`  first pull (all new, clone + write + index):  ${fmt(first)} ms`);
  console.log(`  pull with nothing new (p50 of ${NOTHING_NEW_ROUNDS}):             ${fmt(percentile(idle, 50))} ms`);
  console.log(`  pull after all ${fmt(DAG_COUNT)} changed in one commit:   ${fmt(changed)} ms`);
} finally {
  await coordinator.close();
  await cleanup();
  await remote.close();
  rmSync(root, { recursive: true, force: true });
}
