import { ACTIVE_RUN_STATUSES, RunStatus } from '@trellis/core';
import type { Queryable } from '../db/types.js';
import { RUN_COLUMNS, type RunRecord } from './record.js';

/** A page of one queue's runs: queued ones oldest first, running ones by start. */
export async function queueItems(q: Queryable, queue: string, kind: 'queued' | 'running', limit: number, offset: number): Promise<{ items: RunRecord[]; total: number }> {
  const statuses = kind === 'queued' ? [RunStatus.Queued] : ACTIVE_RUN_STATUSES;
  const order = kind === 'queued' ? 'created_at, id' : 'started_at, id';
  const items = await q.query<RunRecord>(
    `SELECT ${RUN_COLUMNS} FROM runs WHERE queue_name = $1 AND status = ANY($2::smallint[]) ORDER BY ${order} LIMIT $3 OFFSET $4`,
    [queue, statuses, limit, offset],
  );
  const [count] = await q.query<{ n: number }>('SELECT count(*)::int AS n FROM runs WHERE queue_name = $1 AND status = ANY($2::smallint[])', [queue, statuses]);
  return { items, total: count?.n ?? 0 };
}
