import { RunStatus } from '@trellis/core';
import type { Queryable } from '../db/types.js';
import { RUN_COLUMNS, type RunRecord, type TriggeredBy } from './record.js';
import { ACTIVE, TERMINAL, UNFINISHED } from '../db/run-status-sql.js';

/** Who admits: the local executor, or a remote worker with these labels. */
export type AdmissionTarget = { kind: 'local' } | { kind: 'remote'; labels: Record<string, string> };

export interface AdmissionRequest {
  /** Slots of the queues named here: global queues, and DAG-local queues of DAGs with max_active_runs. */
  limits: Map<string, number>;
  /** Slots of any other queue, except sub-run queues (`…/sub`), which are unlimited. */
  defaultLimit: number;
  workerId: string;
  target: AdmissionTarget;
  /** At most this many runs per call. */
  batch: number;
}

/** What one admission call took and saw, as of its statement. */
export interface Admission {
  runs: RunRecord[];
  /**
   * The `profile_version` counter (migration 0031), read after the runs were claimed: a start
   * may resolve its profile entries from memory kept at this value without a statement of its own.
   */
  profilesVersion: number;
  /**
   * Runs for this kind of executor were still queued besides those admitted (held by a full
   * queue, or past the batch), as of the statement's start: one queued while it waited for the
   * queue locks is not counted.
   */
  moreQueued: boolean;
}

/** An admission's answer: one row per admitted run, or a single row of NULL run columns when none was. */
type AdmissionRow = { [K in keyof RunRecord]: RunRecord[K] | null } & { profilesVersion: number; moreQueued: boolean };

/**
 * Moves queued runs to Running for one executor, oldest first, without ever exceeding a
 * queue's limit, in one statement (the trellis_admit function, migration 0010). Each queue is
 * serialised by a transaction advisory lock while its running runs are counted, and candidates
 * are claimed with FOR UPDATE SKIP LOCKED, so two coordinators on one database can neither
 * admit the same run nor overshoot a limit. Only queues with a free slot supply candidates, so
 * a full queue never starves the others. Remote runs are leased: `acked_at` stays empty until
 * the worker confirms the claim. The same statement answers whether other runs of the kind are
 * still queued (its snapshot predates the admission, so the admitted ones are left out by id),
 * and the profile counter as of after the claim (read with a snapshot of its own, migration 0031).
 */
export async function admitQueuedRuns(q: Queryable, request: AdmissionRequest): Promise<Admission> {
  const remote = request.target.kind === 'remote';
  const labels = request.target.kind === 'remote' ? request.target.labels : {};
  const rows = await q.query<AdmissionRow>(
    `WITH admitted AS (SELECT * FROM trellis_admit($1, $2::jsonb, $3::jsonb, $4, $5, $6))
     SELECT ${RUN_COLUMNS}, trellis_profiles_version() AS "profilesVersion", w.more AS "moreQueued"
     FROM (SELECT EXISTS (SELECT 1 FROM runs r WHERE r.status = ${RunStatus.Queued} AND r.dispatch_target = $7 AND r.id NOT IN (SELECT id FROM admitted))) AS w (more)
     LEFT JOIN admitted ON true`,
    [remote, JSON.stringify(labels), JSON.stringify(Object.fromEntries(request.limits)), request.defaultLimit, request.batch, request.workerId, request.target.kind],
  );
  const first = rows[0];
  const runs = rows.flatMap(({ profilesVersion: _version, moreQueued: _more, ...run }) => (run.id !== null ? [run as RunRecord] : []));
  return { runs, profilesVersion: first?.profilesVersion ?? 0, moreQueued: first?.moreQueued ?? false };
}

/** Queued runs per queue and running runs per queue, for conditions and the queues endpoint. */
export async function queueCounts(q: Queryable): Promise<Map<string, { queued: number; running: number }>> {
  const rows = await q.query<{ queue: string; queued: number; running: number }>(
    `SELECT queue_name AS queue, count(*) FILTER (WHERE status = ${RunStatus.Queued})::int AS queued, count(*) FILTER (WHERE status IN (${ACTIVE}))::int AS running
     FROM runs WHERE status IN (${UNFINISHED}) GROUP BY queue_name`,
  );
  return new Map(rows.map((r) => [r.queue, { queued: r.queued, running: r.running }]));
}

/** A queued run leaves the queue (dequeue): Aborted, with the reason. */
export async function dequeueRun(q: Queryable, runId: number, reason: string): Promise<boolean> {
  const rows = await q.query(`UPDATE runs SET status = ${RunStatus.Aborted}, error = $2, finished_at = now(), updated_at = now() WHERE id = $1 AND status = ${RunStatus.Queued} RETURNING id`, [runId, reason]);
  return rows.length === 1;
}

/** A new attempt of a finished run: its id and log file, and who asked for it (the run's new `triggeredBy`). */
export interface RetryAttempt {
  attemptId: string;
  logFile: string;
  triggeredBy: TriggeredBy;
}

/** A new attempt of a finished run: back to the queue with a new attempt id. */
export async function requeueForRetry(q: Queryable, runId: number, attempt: RetryAttempt): Promise<RunRecord | undefined> {
  const { kind, id, name } = attempt.triggeredBy;
  const [row] = await q.query<RunRecord>(
    `UPDATE runs SET status = ${RunStatus.Queued}, attempt_id = $2, attempt_number = attempt_number + 1, log_file = $3, queued_at = now(),
       started_at = NULL, finished_at = NULL, error = '', worker_id = '', updated_at = now(),
       dispatched_at = NULL, acked_at = NULL, stop_requested_at = NULL, report_seq = 0, triggered_by = $4::jsonb
     WHERE id = $1 AND status IN (${TERMINAL}) RETURNING ${RUN_COLUMNS}`,
    [runId, attempt.attemptId, attempt.logFile, JSON.stringify({ kind, id, name })],
  );
  if (row !== undefined) await q.query('DELETE FROM run_nodes WHERE run_id = $1', [runId]);
  return row;
}

/**
 * Whether any run waits for this kind of executor: when none does, idle remote pollers need no
 * admission pass each.
 */
export async function hasQueuedRuns(q: Queryable, kind: AdmissionTarget['kind']): Promise<boolean> {
  const rows = await q.query(`SELECT 1 FROM runs WHERE status = ${RunStatus.Queued} AND dispatch_target = $1 LIMIT 1`, [kind]);
  return rows.length > 0;
}
