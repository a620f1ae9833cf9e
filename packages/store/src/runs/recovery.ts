import type { Queryable } from '../db/types.js';

/**
 * At coordinator start: runs this worker had running (or waiting) when the process died are
 * marked Failed with `error`, so nothing stays Running for ever. Returns their ids.
 */
export async function failInterruptedRuns(q: Queryable, workerId: string, error: string): Promise<Array<{ dagName: string; dagRunId: string }>> {
  return q.query<{ dagName: string; dagRunId: string }>(
    `UPDATE runs SET status = 2, error = $2, finished_at = now(), updated_at = now()
     WHERE worker_id = $1 AND status IN (1, 7)
     RETURNING dag_name AS "dagName", dag_run_id AS "dagRunId"`,
    [workerId, error],
  );
}

/** Retention in days for a DAG: default 30, 0 means 30, negative disables cleanup. */
export function effectiveRetentionDays(days: number): number | undefined {
  if (days < 0) return undefined;
  return days === 0 ? 30 : days;
}

/**
 * Deletes finished runs of `dagName` older than its retention and returns their log files
 * (the caller removes them). A run that is not terminal is never purged.
 */
export async function purgeHistory(q: Queryable, dagName: string, retentionDays: number, now: Date): Promise<string[]> {
  const days = effectiveRetentionDays(retentionDays);
  if (days === undefined) return [];
  const rows = await q.query<{ logFile: string }>(
    `DELETE FROM runs WHERE dag_name = $1 AND status IN (2, 3, 4, 6, 8) AND created_at < $2::timestamptz - make_interval(days => $3)
     RETURNING log_file AS "logFile"`,
    [dagName, now, days],
  );
  return rows.map((r) => r.logFile).filter((f) => f !== '');
}
