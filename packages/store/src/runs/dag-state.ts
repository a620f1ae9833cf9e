import type { Queryable } from '../db/types.js';
import { TERMINAL } from '../db/run-status-sql.js';

export async function setSuspended(q: Queryable, dagName: string, suspended: boolean): Promise<void> {
  await q.query(
    'INSERT INTO dag_state (dag_name, suspended) VALUES ($1, $2) ON CONFLICT (dag_name) DO UPDATE SET suspended = EXCLUDED.suspended, updated_at = now()',
    [dagName, suspended],
  );
}

/** Names of the suspended DAGs among `dagNames`. */
export async function suspendedAmong(q: Queryable, dagNames: string[]): Promise<Set<string>> {
  if (dagNames.length === 0) return new Set();
  const rows = await q.query<{ name: string }>('SELECT dag_name AS name FROM dag_state WHERE suspended AND dag_name = ANY($1::text[])', [dagNames]);
  return new Set(rows.map((r) => r.name));
}

/** DAG names with finished runs older than `before`, for the retention sweep. */
export async function dagsWithRunsBefore(q: Queryable, before: Date): Promise<string[]> {
  const rows = await q.query<{ name: string }>(`SELECT DISTINCT dag_name AS name FROM runs WHERE created_at < $1 AND status IN (${TERMINAL})`, [before]);
  return rows.map((r) => r.name);
}
