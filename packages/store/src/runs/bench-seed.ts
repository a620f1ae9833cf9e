import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { NodeStatus, RunStatus } from '@trellis/core';
import { openDatabase } from '../db/open.js';
import type { Db, Queryable } from '../db/types.js';
import { specHash } from './insert-run.js';

/**
 * Bulk fixtures for benchmarks: a schema of its own and a large, realistic run history,
 * written with a few set-based statements instead of one round trip per row.
 */

export interface BenchDatabase {
  db: Db;
  schema: string;
  /** Closes the pool and drops the schema with everything in it. */
  cleanup: () => Promise<void>;
}

/** A fresh, migrated, uniquely named schema on `databaseUrl` (as openTestDb does for tests). */
export async function openBenchDatabase(databaseUrl: string, label: string): Promise<BenchDatabase> {
  const schema = `bench_${label.replace(/[^a-z0-9_]/gi, '_').toLowerCase().slice(0, 30)}_${randomBytes(4).toString('hex')}`;
  const db = await openDatabase({ databaseUrl, schema });
  return {
    db,
    schema,
    cleanup: async () => {
      await db.close();
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}

export interface BenchDag {
  name: string;
  fileName: string;
  /** The definition text: its hash becomes the runs' spec_hash. */
  yaml: string;
  labels: string[];
}

export interface BenchSeedOptions {
  dags: BenchDag[];
  /** The number of the last run written: runs `from`..`runs`, so a later call can add to a history. */
  runs: number;
  /** The number of the first run written (default 1); numbers give the runs' ids. */
  from?: number;
  /** Rows per INSERT: one statement per chunk keeps each transaction short. */
  chunk?: number;
  /** Created times are spread evenly over this many days before now. */
  days?: number;
  logDir: string;
  onProgress?: (inserted: number, total: number) => void;
}

/** The definitions, stored once per content hash as insertRun stores them. */
async function seedSpecs(q: Queryable, dags: BenchDag[]): Promise<string[]> {
  const hashes = dags.map((d) => specHash(d.yaml));
  await q.query('INSERT INTO dag_specs (hash, yaml) SELECT * FROM unnest($1::text[], $2::text[]) ON CONFLICT (hash) DO NOTHING', [hashes, dags.map((d) => d.yaml)]);
  return hashes;
}

/*
 * One chunk of runs and their 2-4 step nodes in one statement. Run g goes to DAG
 * (g * 7919 mod n): a prime stride scatters neighbours over every DAG. Statuses are terminal,
 * mostly Success, with Failed, Aborted, Partial Success and Rejected mixed in.
 */
const SEED_CHUNK_SQL = `
WITH dags AS (
  SELECT * FROM unnest($3::text[], $4::text[], $5::text[], $6::text[]) WITH ORDINALITY AS d(name, file_name, hash, labels, ord)
), gen AS (
  SELECT g,
    (g::bigint * 7919) % $7 + 1 AS ord,
    md5('run' || g)::uuid::text AS run_id,
    md5('attempt' || g)::uuid::text AS attempt_id,
    (CASE WHEN g % 17 = 0 THEN ${RunStatus.Failed} WHEN g % 43 = 0 THEN ${RunStatus.Aborted} WHEN g % 29 = 0 THEN ${RunStatus.PartialSuccess}
      WHEN g % 97 = 0 THEN ${RunStatus.Rejected} ELSE ${RunStatus.Success} END)::smallint AS status,
    now() - interval '1 minute' - ($8::int - g) * $9::double precision * interval '1 second' AS at
  FROM generate_series($1::int, $2::int) AS g
), inserted AS (
  INSERT INTO runs (dag_name, dag_run_id, file_name, root_dag_run_name, root_dag_run_id, attempt_id, status,
    queued_at, started_at, finished_at, queue_name, worker_id, log_file, error, spec_hash, labels, trigger, triggered_by, created_at, updated_at)
  SELECT d.name, gen.run_id, d.file_name, d.name, gen.run_id, gen.attempt_id, gen.status,
    gen.at, gen.at + interval '1 second', gen.at + (2 + gen.g % 600) * interval '1 second', d.name, 'local',
    $10::text || '/' || d.name || '/' || gen.run_id || '/attempt-1/run.log',
    CASE WHEN gen.status IN (${RunStatus.Failed}, ${RunStatus.Rejected}) THEN 'step s1 exited with code 1' WHEN gen.status = ${RunStatus.Aborted} THEN 'stopped by user' ELSE '' END,
    d.hash, string_to_array(d.labels, ','), CASE WHEN gen.g % 10 = 0 THEN 'schedule' ELSE 'manual' END,
    CASE WHEN gen.g % 10 = 0 THEN '{"kind": "scheduler", "id": "scheduler", "name": "scheduler"}'::jsonb ELSE '{"kind": "anonymous", "id": "anonymous", "name": "anonymous"}'::jsonb END,
    gen.at, gen.at
  FROM gen JOIN dags d ON d.ord = gen.ord
  RETURNING id, status, started_at, finished_at, log_file
)
INSERT INTO run_nodes (run_id, kind, position, step_name, data)
SELECT i.id, 'step', p, 's' || p,
  jsonb_build_object(
    'step', jsonb_build_object('name', 's' || p, 'id', '', 'description', '', 'type', 'command', 'dir', '', 'command', 'echo step ' || p,
      'args', '[]'::jsonb, 'script', '', 'run', '', 'params', '', 'stdout', '', 'stderr', '', 'output', '',
      'depends', CASE WHEN p = 0 THEN '[]'::jsonb ELSE jsonb_build_array('s' || (p - 1)) END, 'preconditions', '[]'::jsonb,
      'repeat_policy', jsonb_build_object('repeat', false, 'interval', 0), 'mail_on_error', false),
    'stdout', regexp_replace(i.log_file, 'run\\.log$', 's' || p || '.out'),
    'stderr', regexp_replace(i.log_file, 'run\\.log$', 's' || p || '.err'),
    'startedAt', to_char(i.started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'finishedAt', to_char(i.finished_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'status', CASE WHEN i.status = ${RunStatus.Success} OR p < 1 + i.id % 3 THEN ${NodeStatus.Success} ELSE ${NodeStatus.Failed} END,
    'statusLabel', CASE WHEN i.status = ${RunStatus.Success} OR p < 1 + i.id % 3 THEN 'succeeded' ELSE 'failed' END,
    'retryCount', 0, 'doneCount', 1, 'subRuns', '[]'::jsonb, 'subRunsRepeated', '[]'::jsonb, 'error', '')
FROM inserted i CROSS JOIN LATERAL generate_series(0, 1 + i.id % 3) AS p`;

/**
 * Writes `runs` finished runs spread over `dags` (whose definitions it stores), in chunks,
 * then vacuums the tables it wrote, refreshing the planner's statistics: the first queries see
 * the real table sizes and rows whose hint bits are set, as in a history written over weeks,
 * which autovacuum has long gone through (and where autovacuum is on, the vacuum that tens of
 * thousands of inserts call for does not come during the measurements that follow).
 */
export async function seedBenchRuns(db: Db, options: BenchSeedOptions): Promise<void> {
  const { dags, runs } = options;
  const chunk = options.chunk ?? 10_000;
  const spacingSec = ((options.days ?? 14) * 86_400) / Math.max(1, runs);
  const hashes = await seedSpecs(db, dags);
  const columns = [dags.map((d) => d.name), dags.map((d) => d.fileName), hashes, dags.map((d) => d.labels.join(','))];
  for (let from = options.from ?? 1; from <= runs; from += chunk) {
    const to = Math.min(runs, from + chunk - 1);
    await db.query(SEED_CHUNK_SQL, [from, to, ...columns, dags.length, runs, spacingSec, options.logDir]);
    options.onProgress?.(to - (options.from ?? 1) + 1, runs - (options.from ?? 1) + 1);
  }
  await db.exec('VACUUM (ANALYZE) runs, run_nodes, dag_specs');
}

/** `n` distinct runs picked at random: targets for single-run reads. */
export async function sampleRuns(q: Queryable, n: number): Promise<Array<{ dagName: string; dagRunId: string }>> {
  return q.query<{ dagName: string; dagRunId: string }>('SELECT dag_name AS "dagName", dag_run_id AS "dagRunId" FROM runs ORDER BY random() LIMIT $1', [n]);
}
