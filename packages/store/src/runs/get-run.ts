import type { Queryable } from '../db/types.js';
import { RUN_COLUMNS, type RunRecord } from './record.js';
import { RUN_VERSION, type RunSummaryCache } from './summary-cache.js';
import { UNFINISHED } from '../db/run-status-sql.js';

export async function getRun(q: Queryable, dagName: string, dagRunId: string): Promise<RunRecord | undefined> {
  const [row] = await q.query<RunRecord>(`SELECT ${RUN_COLUMNS} FROM runs WHERE dag_name = $1 AND dag_run_id = $2`, [dagName, dagRunId]);
  return row;
}

export async function getLatestRun(q: Queryable, dagName: string): Promise<RunRecord | undefined> {
  const [row] = await q.query<RunRecord>(`SELECT ${RUN_COLUMNS} FROM runs WHERE dag_name = $1 ORDER BY created_at DESC, id DESC LIMIT 1`, [dagName]);
  return row;
}

/** What a DAG list item shows of a DAG's runs and state. */
export interface DagRunState {
  /** The newest run's summary as the API shows it, JSON text (see RUN_SUMMARY_JSON). */
  latestJson: string | undefined;
  suspended: boolean;
}

/**
 * The newest run (one index probe per name) and the suspension of each named DAG in one
 * statement; the runs' summaries come from `summaries`, which builds those it does not hold at
 * their version in a second one. A DAG list read again unchanged is one round trip.
 */
export async function getDagRunStates(q: Queryable, summaries: RunSummaryCache, dagNames: string[]): Promise<Map<string, DagRunState>> {
  if (dagNames.length === 0) return new Map();
  const rows = await q.query<{ name: string; suspended: boolean; id: string | null; version: string | null }>(
    `SELECT n.name, coalesce(s.suspended, false) AS suspended, r.id::text AS id, r.version
     FROM unnest($1::text[]) AS n(name)
     LEFT JOIN LATERAL (SELECT id, ${RUN_VERSION} AS version FROM runs WHERE dag_name = n.name ORDER BY created_at DESC, id DESC LIMIT 1) r ON true
     LEFT JOIN dag_state s ON s.dag_name = n.name`,
    [dagNames],
  );
  const latest = rows.flatMap((row) => (row.id !== null && row.version !== null ? [{ id: row.id, version: row.version }] : []));
  const json = await summaries.summaries(q, latest);
  const byId = new Map(latest.map((run, i) => [run.id, json[i]]));
  return new Map(rows.map((row) => [row.name, { latestJson: row.id !== null ? byId.get(row.id) : undefined, suspended: row.suspended }]));
}

/** Runs of one DAG that hold or wait for a slot: queued, running or waiting. */
export async function countActiveRuns(q: Queryable, dagName: string): Promise<number> {
  const [row] = await q.query<{ n: number }>(`SELECT count(*)::int AS n FROM runs WHERE dag_name = $1 AND status IN (${UNFINISHED})`, [dagName]);
  return row?.n ?? 0;
}

export async function getSpecYaml(q: Queryable, hash: string): Promise<string | undefined> {
  const [row] = await q.query<{ yaml: string }>('SELECT yaml FROM dag_specs WHERE hash = $1', [hash]);
  return row?.yaml;
}
