import { RunStatus } from '@trellis/core';
import type { Queryable } from '../db/types.js';
import { endRunningNodes } from '../runs/end-nodes.js';
import { RUN_COLUMNS, type RunRecord } from '../runs/record.js';
import type { AttemptRef } from './leases.js';
import { ACTIVE } from '../db/run-status-sql.js';

export interface HeldReconciliation {
  /** A started attempt acknowledged less than this long ago is spared: its ack may still be on the way to the worker. */
  graceSec: number;
  /** Attempts never acknowledged and not held go back to the queue (on register: the process that was handed them is gone). */
  requeueUnacked: boolean;
}

/**
 * Squares what the coordinator records on a worker with what the worker says it holds. A
 * started attempt it does not hold is over: the run fails with an error that says so (or ends
 * Aborted when a stop was asked for), and its Running steps end with it; it is never run
 * again. One never acknowledged goes back to the queue under a new attempt id, so a late ack
 * of the old one is refused. Returns the runs it changed, with their new status.
 */
export async function reconcileHeldAttempts(q: Queryable, workerId: string, held: AttemptRef[], options: HeldReconciliation): Promise<RunRecord[]> {
  return q.query<RunRecord>(
    `WITH missing AS (
       SELECT r.id AS missing_id FROM runs r
       WHERE r.worker_id = $1 AND r.status IN (${ACTIVE}) AND r.dispatch_target = 'remote'
         AND NOT EXISTS (SELECT 1 FROM unnest($2::text[], $3::text[], $4::text[]) AS h(dag_name, dag_run_id, attempt_id)
                         WHERE h.dag_name = r.dag_name AND h.dag_run_id = r.dag_run_id AND h.attempt_id = r.attempt_id)
     ), ended AS (
       UPDATE runs SET status = CASE WHEN runs.stop_requested_at IS NULL THEN ${RunStatus.Failed} ELSE ${RunStatus.Aborted} END, finished_at = now(), updated_at = now(),
         error = CASE WHEN runs.stop_requested_at IS NULL
           THEN format('worker %s no longer has this run: its process restarted or dropped the run after it started', $1::text)
           ELSE format('stopped: worker %s no longer had this run', $1::text) END
       FROM missing
       WHERE runs.id = missing.missing_id AND runs.worker_id = $1 AND runs.status IN (${ACTIVE})
         AND runs.acked_at < now() - make_interval(secs => $5::int)
       RETURNING ${RUN_COLUMNS}
     ), requeued AS (
       UPDATE runs SET status = ${RunStatus.Queued}, worker_id = '', started_at = NULL, dispatched_at = NULL, attempt_id = gen_random_uuid()::text, updated_at = now()
       FROM missing
       WHERE $6::boolean AND runs.id = missing.missing_id AND runs.worker_id = $1 AND runs.status = ${RunStatus.Running} AND runs.acked_at IS NULL
       RETURNING ${RUN_COLUMNS}
     ), nodes AS (${endRunningNodes('ended')})
     SELECT * FROM ended UNION ALL SELECT * FROM requeued`,
    [workerId, held.map((h) => h.dagName), held.map((h) => h.dagRunId), held.map((h) => h.attemptId), options.graceSec, options.requeueUnacked],
  );
}
