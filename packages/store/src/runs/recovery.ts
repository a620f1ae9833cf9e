import { RunStatus } from '@trellis/core';
import type { Queryable } from '../db/types.js';
import { endRunningNodes } from './end-nodes.js';
import { ACTIVE, TERMINAL } from '../db/run-status-sql.js';

export interface InterruptedRuns {
  failed: Array<{ dagName: string; dagRunId: string }>;
  /** Sub-DAG runs of the failed runs, taken off the queue or told to stop. */
  childrenStopped: number;
}

/**
 * At coordinator start: runs this worker had running (or waiting) when the process died are
 * marked Failed with `error`, their Running steps with them, so nothing stays Running for ever. Their sub-DAG runs have no
 * parent left to wait for them: queued ones (and ones handed to a worker that has not
 * acknowledged them) end Aborted, running ones on workers are flagged to stop, as a stop
 * request would. One statement, so a crash between the steps cannot orphan a child.
 */
export async function failInterruptedRuns(q: Queryable, workerId: string, error: string): Promise<InterruptedRuns> {
  const rows = await q.query<{ dagName: string | null; dagRunId: string | null; children: number }>(
    `WITH failed AS (
       UPDATE runs SET status = ${RunStatus.Failed}, error = $2, finished_at = now(), updated_at = now()
       WHERE worker_id = $1 AND status IN (${ACTIVE})
       RETURNING id, error, dag_name, dag_run_id
     ), nodes AS (${endRunningNodes('failed')}
     ), aborted AS (
       UPDATE runs c SET status = ${RunStatus.Aborted}, error = 'parent run ' || p.dag_name || '/' || p.dag_run_id || ' failed: ' || $2,
         finished_at = now(), updated_at = now()
       FROM failed p
       WHERE c.parent_dag_run_name = p.dag_name AND c.parent_dag_run_id = p.dag_run_id
         AND (c.status = ${RunStatus.Queued} OR (c.status = ${RunStatus.Running} AND c.dispatch_target = 'remote' AND c.acked_at IS NULL))
       RETURNING c.id
     ), flagged AS (
       UPDATE runs c SET stop_requested_at = COALESCE(c.stop_requested_at, now()), updated_at = now()
       FROM failed p
       WHERE c.parent_dag_run_name = p.dag_name AND c.parent_dag_run_id = p.dag_run_id
         AND c.status IN (${ACTIVE}) AND c.dispatch_target = 'remote' AND c.acked_at IS NOT NULL
       RETURNING c.id
     )
     SELECT f.dag_name AS "dagName", f.dag_run_id AS "dagRunId",
       ((SELECT count(*) FROM aborted) + (SELECT count(*) FROM flagged))::int AS children
     FROM (SELECT 1) one LEFT JOIN failed f ON true`,
    [workerId, error],
  );
  const failed = rows.flatMap((r) => (r.dagName !== null && r.dagRunId !== null ? [{ dagName: r.dagName, dagRunId: r.dagRunId }] : []));
  return { failed, childrenStopped: rows[0]?.children ?? 0 };
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
    `DELETE FROM runs WHERE dag_name = $1 AND status IN (${TERMINAL}) AND created_at < $2::timestamptz - make_interval(days => $3)
     RETURNING log_file AS "logFile"`,
    [dagName, now, days],
  );
  return rows.map((r) => r.logFile).filter((f) => f !== '');
}
