import { InvalidCursorError } from '../runs/list-runs.js';
import type { Queryable } from '../db/types.js';

export interface EventRecord {
  id: number;
  occurredAt: Date;
  kind: string;
  type: string;
  dagName: string;
  dagRunId: string;
  attemptId: string;
  sessionId: string;
  userId: string;
  model: string;
  message: string;
  data: Record<string, unknown>;
}

export interface NewEvent {
  kind: string;
  type: string;
  dagName?: string;
  dagRunId?: string;
  /** Who did it (audit records): a user, API key or webhook id. */
  userId?: string;
  message?: string;
  data?: Record<string, unknown>;
}

export interface EventFilter {
  kind?: string;
  type?: string;
  dagName?: string;
  dagRunId?: string;
  attemptId?: string;
  sessionId?: string;
  userId?: string;
  model?: string;
  startTime?: Date;
  endTime?: Date;
  limit: number;
  offset?: number;
  /** Cursor mode: continue after this opaque position. */
  cursor?: string;
}

const COLUMNS = `id, occurred_at AS "occurredAt", kind, type, dag_name AS "dagName", dag_run_id AS "dagRunId", attempt_id AS "attemptId",
  session_id AS "sessionId", user_id AS "userId", model, message, data`;

const EXACT: Array<[keyof EventFilter, string]> = [
  ['kind', 'kind'], ['type', 'type'], ['dagName', 'dag_name'], ['dagRunId', 'dag_run_id'], ['attemptId', 'attempt_id'],
  ['sessionId', 'session_id'], ['userId', 'user_id'], ['model', 'model'],
];

/** Events that have no row change to ride on (definition files changed on disk). */
export async function recordEvent(q: Queryable, event: NewEvent): Promise<void> {
  await q.query('INSERT INTO event_logs (kind, type, dag_name, dag_run_id, user_id, message, data) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
    event.kind, event.type, event.dagName ?? '', event.dagRunId ?? '', event.userId ?? '', event.message ?? '', JSON.stringify(event.data ?? {}),
  ]);
}

function encodeCursor(event: EventRecord): string {
  return Buffer.from(`${event.occurredAt.toISOString()}|${event.id}`).toString('base64url');
}

function decodeCursor(cursor: string): { at: Date; id: number } {
  const [at = '', id = ''] = Buffer.from(cursor, 'base64url').toString().split('|');
  const time = new Date(at);
  if (Number.isNaN(time.getTime()) || !/^\d+$/.test(id)) throw new InvalidCursorError({ cursor });
  return { at: time, id: Number(id) };
}

/** Newest first, filtered; offset pages with a total, or a forward-only cursor. */
export async function listEvents(q: Queryable, filter: EventFilter): Promise<{ events: EventRecord[]; total?: number; nextCursor?: string }> {
  const where: string[] = [];
  const params: unknown[] = [];
  for (const [key, column] of EXACT) {
    const value = filter[key];
    if (typeof value === 'string' && value !== '') {
      params.push(value);
      where.push(`${column} = $${params.length}`);
    }
  }
  if (filter.startTime !== undefined) where.push(`occurred_at >= $${params.push(filter.startTime)}`);
  if (filter.endTime !== undefined) where.push(`occurred_at <= $${params.push(filter.endTime)}`);
  const filtered = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
  if (filter.cursor !== undefined) {
    const after = decodeCursor(filter.cursor);
    // The event's own time at full precision (the cursor keeps milliseconds only).
    const atParam = params.push(after.at);
    const idParam = params.push(after.id);
    const cursorWhere = [...where, `(occurred_at, id) < (COALESCE((SELECT occurred_at FROM event_logs WHERE id = $${idParam}), $${atParam}::timestamptz), $${idParam})`];
    const rows = await q.query<EventRecord>(`SELECT ${COLUMNS} FROM event_logs WHERE ${cursorWhere.join(' AND ')} ORDER BY occurred_at DESC, id DESC LIMIT $${params.push(filter.limit + 1)}`, params);
    return pageWithCursor(rows, filter.limit);
  }
  if (filter.offset === undefined) {
    const rows = await q.query<EventRecord>(`SELECT ${COLUMNS} FROM event_logs ${filtered} ORDER BY occurred_at DESC, id DESC LIMIT $${params.push(filter.limit + 1)}`, params);
    return pageWithCursor(rows, filter.limit);
  }
  const [count] = await q.query<{ n: number }>(`SELECT count(*)::int AS n FROM event_logs ${filtered}`, params);
  const rows = await q.query<EventRecord>(
    `SELECT ${COLUMNS} FROM event_logs ${filtered} ORDER BY occurred_at DESC, id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
    [...params, filter.limit, filter.offset],
  );
  return { events: rows, total: count?.n ?? 0 };
}

function pageWithCursor(rows: EventRecord[], limit: number): { events: EventRecord[]; nextCursor?: string } {
  const events = rows.slice(0, limit);
  const last = events.at(-1);
  return rows.length > limit && last !== undefined ? { events, nextCursor: encodeCursor(last) } : { events };
}

/** Events of these kinds after `afterId`, oldest first (live streams follow the log by id). */
export async function eventsAfter(q: Queryable, afterId: number, kinds: readonly string[], limit: number): Promise<EventRecord[]> {
  return q.query<EventRecord>(`SELECT ${COLUMNS} FROM event_logs WHERE id > $1 AND kind = ANY($2::text[]) ORDER BY id LIMIT $3`, [afterId, kinds, limit]);
}

/** The newest event id (a stream without Last-Event-ID starts after it). */
export async function lastEventId(q: Queryable): Promise<number> {
  const [row] = await q.query<{ id: number | null }>('SELECT max(id) AS id FROM event_logs');
  return row?.id ?? 0;
}
