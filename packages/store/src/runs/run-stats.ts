import { RunStatus } from '@trellis/core';
import type { Queryable } from '../db/types.js';
import { ACTIVE, UNFINISHED } from '../db/run-status-sql.js';

export interface QueueStats {
  queue: string;
  queued: number;
  running: number;
  /** When the longest-waiting queued run was queued. */
  oldestQueuedAt: Date | null;
}

/** Per queue: queued and running runs and the oldest wait. Reads only active rows (partial indexes). */
export async function queueStats(q: Queryable): Promise<QueueStats[]> {
  return q.query<QueueStats>(
    `SELECT queue_name AS queue, count(*) FILTER (WHERE status = ${RunStatus.Queued})::int AS queued, count(*) FILTER (WHERE status IN (${ACTIVE}))::int AS running,
       min(queued_at) FILTER (WHERE status = ${RunStatus.Queued}) AS "oldestQueuedAt"
     FROM runs WHERE status IN (${UNFINISHED}) GROUP BY queue_name`,
  );
}

/** Runs that finished in the last 24 hours, by status (the index on finished_at keeps this a range scan). */
export async function finishedRunsByStatus(q: Queryable): Promise<Map<number, number>> {
  const rows = await q.query<{ status: number; n: number }>(
    "SELECT status, count(*)::int AS n FROM runs WHERE finished_at > now() - interval '24 hours' GROUP BY status",
  );
  return new Map(rows.map((r) => [r.status, r.n]));
}
