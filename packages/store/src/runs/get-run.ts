import type { Queryable } from '../db/types.js';
import { RUN_COLUMNS, type RunRecord } from './record.js';
import { RUN_VERSION, type RunSummaryCache, type RunVersion } from './summary-cache.js';
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
 * their version in a second one. A DAG list read again unchanged is one round trip. The states
 * come back as one JSON array in one row: pg's parsing of a row per DAG, and the rebuilding of
 * its answer after, were a tenth of what a 100-DAG list page cost the coordinator.
 */
export async function getDagRunStates(q: Queryable, summaries: RunSummaryCache, dagNames: string[]): Promise<Map<string, DagRunState>> {
  if (dagNames.length === 0) return new Map();
  const [row] = await q.query<{ states: string }>(
    `SELECT coalesce(json_agg(json_build_array(n.name, coalesce(s.suspended, false), r.id::text, r.version)), '[]')::text AS states
     FROM unnest($1::text[]) AS n(name)
     LEFT JOIN LATERAL (SELECT id, ${RUN_VERSION} AS version FROM runs WHERE dag_name = n.name ORDER BY created_at DESC, id DESC LIMIT 1) r ON true
     LEFT JOIN dag_state s ON s.dag_name = n.name`,
    [dagNames],
  );
  // [name, suspended, id, version]: id and version are null for a DAG without runs.
  const states = JSON.parse(row?.states ?? '[]') as Array<[string, boolean, string | null, string | null]>;
  const latest: RunVersion[] = [];
  for (const [, , id, version] of states) if (id !== null && version !== null) latest.push({ id, version });
  const json = await summaries.summaries(q, latest);
  const byName = new Map<string, DagRunState>();
  let next = 0;
  for (const [name, suspended, id, version] of states) {
    byName.set(name, { latestJson: id !== null && version !== null ? json[next++] : undefined, suspended });
  }
  return byName;
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
