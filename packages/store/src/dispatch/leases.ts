import { RunStatus } from '@trellis/core';
import type { Queryable } from '../db/types.js';
import { endRunningNodes } from '../runs/end-nodes.js';
import { RUN_COLUMNS, type RunRecord } from '../runs/record.js';
import { ACTIVE } from '../db/run-status-sql.js';

/** One attempt of one run, as the worker protocol names it. */
export interface AttemptRef {
  dagName: string;
  dagRunId: string;
  attemptId: string;
}

/**
 * A worker confirms the claim it was handed. Refused when the lease was taken back (ack
 * timeout, a newer attempt, a stop before the start) or belongs to another worker, so a run
 * never starts twice. Repeating an accepted ack is accepted again.
 */
export async function ackRun(q: Queryable, workerId: string, ref: AttemptRef): Promise<RunRecord | undefined> {
  const [row] = await q.query<RunRecord>(
    `UPDATE runs SET acked_at = COALESCE(acked_at, now()), updated_at = now()
     WHERE dag_name = $1 AND dag_run_id = $2 AND attempt_id = $3 AND worker_id = $4 AND status IN (${ACTIVE}) AND stop_requested_at IS NULL
     RETURNING ${RUN_COLUMNS}`,
    [ref.dagName, ref.dagRunId, ref.attemptId, workerId],
  );
  return row;
}

/**
 * Hand-outs no worker confirmed within `ackTimeoutSec` go back to the queue under a new attempt
 * id, so a late ack of the old one is refused.
 */
export async function requeueUnacked(q: Queryable, ackTimeoutSec: number): Promise<RunRecord[]> {
  return q.query<RunRecord>(
    `UPDATE runs SET status = ${RunStatus.Queued}, worker_id = '', started_at = NULL, dispatched_at = NULL, attempt_id = gen_random_uuid()::text, updated_at = now()
     WHERE status = ${RunStatus.Running} AND dispatch_target = 'remote' AND acked_at IS NULL AND dispatched_at < now() - make_interval(secs => $1)
     RETURNING ${RUN_COLUMNS}`,
    [ackTimeoutSec],
  );
}

/**
 * Runs that started on a worker silent for more than `staleSec` fail with an error naming the
 * worker, their Running steps with them; they are never run again behind the user's back. The
 * worker's list of running tasks is cleared, since what it last reported is over. If the worker comes back, its
 * heartbeat is told to cancel them and its reports are refused as stale. A coordinator's own
 * executor (`local:<id>`) heartbeats the same way, so another coordinator on the database
 * fails the local runs of one that died and never came back.
 */
export async function failRunsOfLostWorkers(q: Queryable, staleSec: number): Promise<RunRecord[]> {
  // One statement: the failed runs and one worker.lost event per lost worker land together.
  return q.query<RunRecord>(
    `WITH failed AS (
       UPDATE runs SET status = ${RunStatus.Failed}, finished_at = now(), updated_at = now(),
         error = format('%s was lost: no heartbeat for more than %s s (last heartbeat %s)',
                        CASE WHEN runs.worker_id LIKE 'local:%' THEN 'coordinator ' || substr(runs.worker_id, 7) ELSE 'worker ' || runs.worker_id END, $1::int,
                        COALESCE(to_char(lost.lost_heartbeat AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), 'never'))
       FROM (SELECT r.id AS lost_id, w.last_heartbeat AS lost_heartbeat FROM runs r LEFT JOIN workers w ON w.id = r.worker_id
             WHERE r.status IN (${ACTIVE}) AND r.worker_id <> '' AND r.acked_at IS NOT NULL
               AND (w.id IS NULL OR w.last_heartbeat < now() - make_interval(secs => $1::int))) lost
       WHERE runs.id = lost.lost_id AND runs.status IN (${ACTIVE})
       RETURNING ${RUN_COLUMNS}
     ), lost_event AS (
       INSERT INTO event_logs (kind, type, message, data)
       SELECT 'worker', 'worker.lost', min(error), jsonb_build_object('workerId', "workerId", 'failedRuns', count(*))
       FROM failed GROUP BY "workerId"
     ), nodes AS (${endRunningNodes('failed')}
     ), forgotten AS (
       UPDATE workers SET running = '[]'::jsonb WHERE id IN (SELECT "workerId" FROM failed)
     )
     SELECT * FROM failed`,
    [staleSec],
  );
}

/** Of the attempts a worker says it runs, those it must stop: stopped, failed over, superseded or unknown. */
export async function cancellationsFor(q: Queryable, workerId: string, running: AttemptRef[]): Promise<AttemptRef[]> {
  if (running.length === 0) return [];
  return q.query<AttemptRef>(
    `SELECT t.dag_name AS "dagName", t.dag_run_id AS "dagRunId", t.attempt_id AS "attemptId"
     FROM unnest($2::text[], $3::text[], $4::text[]) AS t(dag_name, dag_run_id, attempt_id)
     WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.dag_name = t.dag_name AND r.dag_run_id = t.dag_run_id AND r.attempt_id = t.attempt_id
                         AND r.worker_id = $1 AND r.status IN (${ACTIVE}) AND r.stop_requested_at IS NULL)`,
    [workerId, running.map((r) => r.dagName), running.map((r) => r.dagRunId), running.map((r) => r.attemptId)],
  );
}

/** Attempts the coordinator has recorded as running on a worker (returned when it registers). */
export async function attemptsAssignedTo(q: Queryable, workerId: string): Promise<AttemptRef[]> {
  return q.query<AttemptRef>(
    `SELECT dag_name AS "dagName", dag_run_id AS "dagRunId", attempt_id AS "attemptId" FROM runs
     WHERE worker_id = $1 AND status IN (${ACTIVE}) AND acked_at IS NOT NULL`,
    [workerId],
  );
}

/**
 * Stops a remote run: one never acknowledged ends Aborted at once (its ack will be refused);
 * a started one is flagged, and the worker's next heartbeat carries the cancellation.
 */
export async function requestRemoteStop(q: Queryable, runId: number, reason: string): Promise<'aborted' | 'requested' | 'not_running'> {
  const aborted = await q.query(
    `UPDATE runs SET status = ${RunStatus.Aborted}, error = $2, finished_at = now(), updated_at = now()
     WHERE id = $1 AND status = ${RunStatus.Running} AND dispatch_target = 'remote' AND acked_at IS NULL RETURNING id`,
    [runId, reason],
  );
  if (aborted.length === 1) return 'aborted';
  const flagged = await q.query(
    `UPDATE runs SET stop_requested_at = COALESCE(stop_requested_at, now()), updated_at = now() WHERE id = $1 AND status IN (${ACTIVE}) RETURNING id`,
    [runId],
  );
  return flagged.length === 1 ? 'requested' : 'not_running';
}

/**
 * Records that reports up to `seq` of this attempt are applied; false for a stale attempt. An
 * attempt whose run already ended is stale too: an attempt's last report is the one that ends
 * its run, so anything after it comes from an attempt the coordinator ended (a lost worker).
 */
export async function advanceReportSeq(q: Queryable, runId: number, attemptId: string, seq: number): Promise<boolean> {
  const rows = await q.query(`UPDATE runs SET report_seq = GREATEST(report_seq, $3) WHERE id = $1 AND attempt_id = $2 AND status IN (${ACTIVE}) RETURNING id`, [runId, attemptId, seq]);
  return rows.length === 1;
}

/** A lease that never reached its worker returns to the queue at once, same attempt. */
export async function releaseLease(q: Queryable, runId: number, attemptId: string): Promise<void> {
  await q.query(
    `UPDATE runs SET status = ${RunStatus.Queued}, worker_id = '', started_at = NULL, dispatched_at = NULL, updated_at = now()
     WHERE id = $1 AND attempt_id = $2 AND status = ${RunStatus.Running} AND acked_at IS NULL`,
    [runId, attemptId],
  );
}
