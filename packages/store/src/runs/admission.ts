import type { Queryable } from '../db/types.js';
import { RUN_COLUMNS, type RunRecord } from './record.js';

/** Who admits: the local executor, or a remote worker with these labels. */
export type AdmissionTarget = { kind: 'local' } | { kind: 'remote'; labels: Record<string, string> };

export interface AdmissionRequest {
  /** Slots per queue; queues not listed get `defaultLimit` (DAG-local queues: 1, or max_active_runs). */
  limits: Map<string, number>;
  defaultLimit: (queueName: string) => number;
  workerId: string;
  target: AdmissionTarget;
  /** At most this many runs per call. */
  batch: number;
  /** Called when no run at all waits for this target (not merely: every queue is full). */
  onNoneQueued?: () => void;
}

/** Runs the target may take: local ones, or remote ones whose selector the worker's labels contain. */
function targetFilter(target: AdmissionTarget): { sql: string; param: string } {
  return target.kind === 'local'
    ? // $1 is bound in both forms so the statements around it keep one parameter numbering.
      { sql: "dispatch_target = 'local' AND $1::jsonb IS NOT NULL", param: '{}' }
    : { sql: "dispatch_target = 'remote' AND worker_selector <@ $1::jsonb", param: JSON.stringify(target.labels) };
}

/** Free slots of the queues that hold runs for this target, counted under each queue's lock. */
async function freeSlots(q: Queryable, request: AdmissionRequest): Promise<Map<string, number>> {
  const filter = targetFilter(request.target);
  // One statement finds the queues with work for this target and takes their locks, in name
  // order, so two admitting coordinators cannot deadlock.
  const locked = await q.query<{ queue: string }>(
    `SELECT queue, pg_advisory_xact_lock(hashtext('trellis.queue.' || queue)) IS NULL AS locked
     FROM (SELECT DISTINCT queue_name AS queue FROM runs WHERE status = 5 AND ${filter.sql}) AS waiting ORDER BY queue`,
    [filter.param],
  );
  const queues = locked.map((r) => r.queue);
  if (queues.length === 0) {
    request.onNoneQueued?.();
    return new Map();
  }
  const running = await q.query<{ queue: string; n: number }>(
    'SELECT queue_name AS queue, count(*)::int AS n FROM runs WHERE status IN (1, 7) AND queue_name = ANY($1::text[]) GROUP BY queue_name',
    [queues],
  );
  const busy = new Map(running.map((r) => [r.queue, r.n]));
  const free = new Map<string, number>();
  for (const queue of queues) {
    const slots = (request.limits.get(queue) ?? request.defaultLimit(queue)) - (busy.get(queue) ?? 0);
    if (slots > 0) free.set(queue, Math.min(slots, request.batch));
  }
  return free;
}

/**
 * Moves queued runs to Running for one executor, oldest first, without ever exceeding a
 * queue's limit. Each queue is serialised by a transaction advisory lock while its running
 * runs are counted, and candidates are claimed with FOR UPDATE SKIP LOCKED, so two
 * coordinators on one database can neither admit the same run nor overshoot a limit. Only
 * queues with a free slot supply candidates, so a full queue never starves the others.
 * Remote runs are leased: `acked_at` stays empty until the worker confirms the claim.
 * Call inside a transaction.
 */
export async function admitQueuedRuns(q: Queryable, request: AdmissionRequest): Promise<RunRecord[]> {
  const free = await freeSlots(q, request);
  if (free.size === 0) return [];
  const filter = targetFilter(request.target);
  // Counts above were taken under the locks; candidates are claimed and moved in one statement.
  return q.query<RunRecord>(
    `UPDATE runs SET status = 1, started_at = now(), worker_id = $5, updated_at = now(), dispatched_at = now(),
       acked_at = CASE WHEN dispatch_target = 'local' THEN now() END
     WHERE id IN (
       SELECT id FROM runs WHERE id IN (
         SELECT s.id FROM (
           SELECT id, queue_name, row_number() OVER (PARTITION BY queue_name ORDER BY created_at, id) AS rn
           FROM runs WHERE status = 5 AND ${filter.sql} AND queue_name = ANY($2::text[])
         ) s JOIN unnest($2::text[], $3::int[]) AS f(queue, slots) ON f.queue = s.queue_name WHERE s.rn <= f.slots)
       ORDER BY created_at, id LIMIT $4 FOR UPDATE SKIP LOCKED)
     AND status = 5 RETURNING ${RUN_COLUMNS}`,
    [filter.param, [...free.keys()], [...free.values()], request.batch, request.workerId],
  );
}

/** Queued runs per queue and running runs per queue, for conditions and the queues endpoint. */
export async function queueCounts(q: Queryable): Promise<Map<string, { queued: number; running: number }>> {
  const rows = await q.query<{ queue: string; queued: number; running: number }>(
    `SELECT queue_name AS queue, count(*) FILTER (WHERE status = 5)::int AS queued, count(*) FILTER (WHERE status IN (1, 7))::int AS running
     FROM runs WHERE status IN (1, 5, 7) GROUP BY queue_name`,
  );
  return new Map(rows.map((r) => [r.queue, { queued: r.queued, running: r.running }]));
}

/** A queued run leaves the queue (dequeue): Aborted, with the reason. */
export async function dequeueRun(q: Queryable, runId: number, reason: string): Promise<boolean> {
  const rows = await q.query("UPDATE runs SET status = 3, error = $2, finished_at = now(), updated_at = now() WHERE id = $1 AND status = 5 RETURNING id", [runId, reason]);
  return rows.length === 1;
}

/** A new attempt of a finished run: back to the queue with a new attempt id. */
export async function requeueForRetry(q: Queryable, runId: number, attemptId: string, logFile: string): Promise<RunRecord | undefined> {
  const [row] = await q.query<RunRecord>(
    `UPDATE runs SET status = 5, attempt_id = $2, attempt_number = attempt_number + 1, log_file = $3, queued_at = now(),
       started_at = NULL, finished_at = NULL, error = '', worker_id = '', updated_at = now(),
       dispatched_at = NULL, acked_at = NULL, stop_requested_at = NULL, report_seq = 0
     WHERE id = $1 AND status IN (2, 3, 4, 6, 8) RETURNING ${RUN_COLUMNS}`,
    [runId, attemptId, logFile],
  );
  if (row !== undefined) await q.query('DELETE FROM run_nodes WHERE run_id = $1', [runId]);
  return row;
}

/** Whether any run waits for a remote worker: when none does, idle pollers need no admission pass each. */
export async function hasQueuedRemoteRuns(q: Queryable): Promise<boolean> {
  const rows = await q.query("SELECT 1 FROM runs WHERE status = 5 AND dispatch_target = 'remote' LIMIT 1");
  return rows.length > 0;
}
