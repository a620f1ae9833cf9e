import type { Queryable } from '../db/types.js';
import { RUN_COLUMNS, type RunRecord } from './record.js';

export interface AdmissionRequest {
  /** Slots per queue; queues not listed get `defaultLimit` (DAG-local queues: 1, or max_active_runs). */
  limits: Map<string, number>;
  defaultLimit: (queueName: string) => number;
  workerId: string;
  /** At most this many runs per call. */
  batch: number;
  /** Only runs this executor may take (for example, without a worker selector). */
  accepts?: (run: RunRecord) => boolean;
}

/**
 * Moves queued runs to Running for one executor, oldest first, without ever exceeding a
 * queue's limit. Candidates are claimed with FOR UPDATE SKIP LOCKED and each queue is
 * serialised by a transaction advisory lock while its running runs are counted, so two
 * coordinators on one database can neither admit the same run nor overshoot a limit.
 * Call inside a transaction.
 */
export async function admitQueuedRuns(q: Queryable, request: AdmissionRequest): Promise<RunRecord[]> {
  const candidates = await q.query<RunRecord>(`SELECT ${RUN_COLUMNS} FROM runs WHERE status = 5 ORDER BY created_at, id LIMIT $1 FOR UPDATE SKIP LOCKED`, [request.batch * 4]);
  const queues = [...new Set(candidates.map((c) => c.queueName))].sort();
  const free = new Map<string, number>();
  for (const queue of queues) {
    await q.query("SELECT pg_advisory_xact_lock(hashtext('trellis.queue.' || $1))", [queue]);
    const [row] = await q.query<{ n: number }>('SELECT count(*)::int AS n FROM runs WHERE queue_name = $1 AND status IN (1, 7)', [queue]);
    free.set(queue, (request.limits.get(queue) ?? request.defaultLimit(queue)) - (row?.n ?? 0));
  }
  const admitted: RunRecord[] = [];
  for (const run of candidates) {
    if (admitted.length >= request.batch) break;
    const slots = free.get(run.queueName) ?? 0;
    if (slots <= 0 || (request.accepts !== undefined && !request.accepts(run))) continue;
    free.set(run.queueName, slots - 1);
    admitted.push(run);
  }
  if (admitted.length === 0) return [];
  return q.query<RunRecord>(
    `UPDATE runs SET status = 1, started_at = now(), worker_id = $2, updated_at = now()
     WHERE id = ANY($1::bigint[]) AND status = 5 RETURNING ${RUN_COLUMNS}`,
    [admitted.map((r) => r.id), request.workerId],
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
       started_at = NULL, finished_at = NULL, error = '', worker_id = '', updated_at = now()
     WHERE id = $1 AND status IN (2, 3, 4, 6, 8) RETURNING ${RUN_COLUMNS}`,
    [runId, attemptId, logFile],
  );
  if (row !== undefined) await q.query('DELETE FROM run_nodes WHERE run_id = $1', [runId]);
  return row;
}
