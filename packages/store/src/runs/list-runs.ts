import { BadRequestError, type RunStatus } from '@trellis/core';
import type { Queryable } from '../db/types.js';
import { CREATED_AT_TEXT, RUN_COLUMNS, RUN_SUMMARY_COLUMNS, type RunRecord, type RunSummaryPage, type RunSummaryRecord } from './record.js';
import { RUN_VERSION, type RunSummaryCache } from './summary-cache.js';

export interface RunFilter {
  name?: string;
  status?: RunStatus;
  /** Runs created at or after / before these instants. */
  from?: Date;
  to?: Date;
  dagRunId?: string;
  labels?: string[];
  limit: number;
  cursor?: string;
}

/** A page cursor this store did not hand out; `details` repeat it when the caller wants it quoted. */
export class InvalidCursorError extends BadRequestError {
  constructor(details?: Record<string, unknown>) {
    super('invalid cursor', details);
  }
}

/** An opaque, forward-only position: the (created_at, id) of the last row returned. */
function encodeCursor(run: { createdAt: Date | string; id: number | string }): string {
  const at = typeof run.createdAt === 'string' ? run.createdAt : run.createdAt.toISOString();
  return Buffer.from(`${at}|${run.id}`).toString('base64url');
}

function decodeCursor(cursor: string): { at: string; id: number } {
  const [at, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  if (at === undefined || id === undefined || Number.isNaN(Date.parse(at)) || !/^\d+$/.test(id)) throw new InvalidCursorError();
  return { at, id: Number(id) };
}

/** Runs newest first; `nextCursor` is present only when older rows exist. */
export function listRuns(q: Queryable, filter: RunFilter): Promise<{ runs: RunRecord[]; nextCursor?: string }> {
  return pageOf<RunRecord>(q, RUN_COLUMNS, filter);
}

/** As listRuns, with only what a run list shows of each run (the API's run lists). */
export function listRunSummaries(q: Queryable, filter: RunFilter): Promise<{ runs: RunSummaryRecord[]; nextCursor?: string }> {
  return pageOf<RunSummaryRecord>(q, RUN_SUMMARY_COLUMNS, filter);
}

/**
 * As listRunSummaries, each run as the API's JSON text (the run list endpoints pass them on as
 * they are). The page's rows are read as ids and versions; `summaries` builds only those it does
 * not hold, and hands out the same strings for the others.
 */
export async function listRunSummaryJson(q: Queryable, summaries: RunSummaryCache, filter: RunFilter): Promise<RunSummaryPage> {
  const { runs, nextCursor } = await pageOf<{ id: string; createdAt: string; version: string }>(q, `id::text AS id, ${CREATED_AT_TEXT} AS "createdAt", ${RUN_VERSION} AS version`, filter);
  const texts = (await summaries.summaries(q, runs)).filter((summary) => summary !== undefined);
  return nextCursor !== undefined ? { summaries: texts, nextCursor } : { summaries: texts };
}

async function pageOf<T extends { createdAt: Date | string; id: number | string }>(q: Queryable, columns: string, filter: RunFilter): Promise<{ runs: T[]; nextCursor?: string }> {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (clause: string, value: unknown): void => {
    params.push(value);
    where.push(clause.replace('?', `$${params.length}`));
  };
  if (filter.name !== undefined) add('dag_name = ?', filter.name);
  if (filter.status !== undefined) add('status = ?', filter.status);
  if (filter.from !== undefined) add('created_at >= ?', filter.from);
  if (filter.to !== undefined) add('created_at < ?', filter.to);
  if (filter.dagRunId !== undefined) add('dag_run_id = ?', filter.dagRunId);
  if (filter.labels !== undefined && filter.labels.length > 0) add('labels @> ?::text[]', filter.labels);
  if (filter.cursor !== undefined) {
    const { at, id } = decodeCursor(filter.cursor);
    params.push(at, id);
    // The row's own created_at, at the database's microsecond precision: the cursor's copy has
    // only milliseconds, and runs created within one millisecond would otherwise be skipped.
    where.push(`(created_at, id) < (COALESCE((SELECT created_at FROM runs WHERE id = $${params.length}), $${params.length - 1}::timestamptz), $${params.length})`);
  }
  params.push(filter.limit + 1);
  const rows = await q.query<T>(
    `SELECT ${columns} FROM runs ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, id DESC LIMIT $${params.length}`,
    params,
  );
  const runs = rows.slice(0, filter.limit);
  const last = runs[runs.length - 1];
  return rows.length > filter.limit && last !== undefined ? { runs, nextCursor: encodeCursor(last) } : { runs };
}
