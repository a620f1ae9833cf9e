import { isUniqueViolation } from '../auth/unique.js';
import type { Queryable } from '../db/types.js';
import { paramsInto, snapshotCtes, type SnapshotWrite } from '../runs/update-run.js';
import { newPieces, ROWS_PER_INSERT, type NewLogChunk, type Piece, type StreamState } from './append-log-chunks.js';
import { RUN_LOG_CHANNEL, type LogStreamInfo } from './log-stream.js';

/** Where each stream a single writer writes ends, as far as it knows (what it stored so far). */
export type OwnLogStreams = Map<string, LogStreamInfo>;

/** What one own report stored: its log chunks (false: refused, nothing of it was written) and whether its snapshot moved the run. */
export interface OwnReportResult {
  logsStored: boolean;
  moved: boolean;
}

function chunkValues(pieces: Piece[], runId: string, attemptId: string, param: (value: unknown) => string): string {
  return pieces.map((p) => `(${runId}::bigint, ${attemptId}::text, ${param(p.stream)}::text, ${param(p.offset)}::bigint, ${param(p.linesBefore)}::bigint, ${param(p.newlines)}::int, ${param(p.data)}::bytea)`).join(', ');
}

/**
 * Two writers that both found a stream ending where they thought (two coordinators handed the
 * same resend of a worker's report) store their first pieces at the same offset: the second
 * fails on the chunk's key, having stored nothing, and is answered undefined (not stored) rather
 * than with the error, as a stream that did not end there is.
 */
async function ownAppend(q: Queryable, sql: string, params: unknown[]): Promise<Array<{ ok: boolean; moved: boolean }> | undefined> {
  try {
    return await q.query<{ ok: boolean; moved: boolean }>(sql, params);
  } catch (error) {
    if (isUniqueViolation(error) && (error as { constraint?: unknown }).constraint === 'run_log_chunks_pkey') return undefined;
    throw error;
  }
}

/**
 * Stores chunks of streams whose ends the caller knows, in one statement, without the locking
 * read of appendLogChunks: a local run's engine (its attempt id fences every other writer out)
 * and the coordinator a worker reports an attempt to (what it stored of that attempt so far).
 * The statement checks that the streams do end there and stores nothing otherwise; it also
 * stores nothing for chunks that do not follow on directly, for more pieces than one insert
 * takes, or when another writer stored the same offsets first. Either way `logsStored` is false,
 * and the caller uses appendLogChunks, whose answer says where the streams end. On success,
 * `known` holds the new ends. One round trip instead of five.
 *
 * Only streams the chunks add to are checked and written: a stream given only an empty chunk
 * could otherwise have its size set back over what another writer stored meanwhile. They are
 * locked in name order, as appendLogChunks locks them, so the two paths cannot deadlock.
 *
 * `snapshot`, when given, is written by the same statement after the chunks, and only if they
 * were stored (a status never goes ahead of its log): a short run's logs and status then cost
 * one round trip, not two.
 */
export async function appendOwnLogChunks(q: Queryable, runId: number, attemptId: string, chunks: NewLogChunk[], known: OwnLogStreams, snapshot?: SnapshotWrite): Promise<OwnReportResult> {
  const states = new Map<string, StreamState>();
  const pieces: Piece[] = [];
  for (const chunk of chunks) {
    const state = states.get(chunk.stream) ?? { size: 0, newlines: 0, endsWithNewline: false, ...known.get(chunk.stream), changed: false };
    states.set(chunk.stream, state);
    if (chunk.offset !== state.size) return { logsStored: false, moved: false };
    pieces.push(...newPieces(state, chunk));
  }
  if (pieces.length > ROWS_PER_INSERT) return { logsStored: false, moved: false };
  const params: unknown[] = [];
  const param = paramsInto(params);
  const snapshotPart = (when: string): string => (snapshot !== undefined ? `, ${snapshotCtes(snapshot, param, when)}` : '');
  const moved = snapshot !== undefined ? '(SELECT count(*)::int FROM moved) = 1' : 'false';
  if (pieces.length === 0) {
    if (snapshot === undefined) return { logsStored: true, moved: false };
    const rows = await q.query<{ moved: boolean }>(`WITH ${snapshotCtes(snapshot, param)} SELECT ${moved} AS moved`, params);
    return { logsStored: true, moved: rows[0]?.moved === true };
  }
  const [run, attempt] = [param(runId), param(attemptId)];
  const streams = [...states].filter(([, state]) => state.changed).map(([stream]) => stream);
  const [names, sizesBefore, sizes, newlines, ends] = [
    param(streams), param(streams.map((s) => known.get(s)?.size ?? 0)), param(streams.map((s) => states.get(s)?.size ?? 0)),
    param(streams.map((s) => states.get(s)?.newlines ?? 0)), param(streams.map((s) => states.get(s)?.endsWithNewline ?? false)),
  ];
  const channel = param(RUN_LOG_CHANNEL);
  const values = chunkValues(pieces, run, attempt, param);
  const rows = await ownAppend(
    q,
    `WITH ok AS (
       SELECT NOT EXISTS (
         SELECT 1 FROM unnest(${names}::text[], ${sizesBefore}::bigint[]) AS e(stream, size)
         LEFT JOIN run_log_streams s ON s.run_id = ${run} AND s.attempt_id = ${attempt} AND s.stream = e.stream
         WHERE coalesce(s.size, 0) <> e.size) AS ok),
     streams AS (
       INSERT INTO run_log_streams (run_id, attempt_id, stream, size, newlines, ends_with_newline)
       SELECT ${run}, ${attempt}, u.stream, u.size, u.newlines, u.ends FROM unnest(${names}::text[], ${sizes}::bigint[], ${newlines}::bigint[], ${ends}::boolean[]) AS u(stream, size, newlines, ends)
       WHERE (SELECT ok FROM ok) ORDER BY u.stream
       ON CONFLICT (run_id, attempt_id, stream) DO UPDATE SET size = EXCLUDED.size, newlines = EXCLUDED.newlines, ends_with_newline = EXCLUDED.ends_with_newline),
     pieces AS (
       INSERT INTO run_log_chunks (run_id, attempt_id, stream, byte_offset, lines_before, newlines, data)
       SELECT * FROM (VALUES ${values}) AS v WHERE (SELECT ok FROM ok))${snapshotPart('(SELECT ok FROM ok)')}
     SELECT ok, CASE WHEN ok THEN pg_notify(${channel}, ${run}::text) END AS notified, ${moved} AS moved FROM ok`,
    params,
  );
  if (rows?.[0]?.ok !== true) return { logsStored: false, moved: false };
  for (const [stream, state] of states) known.set(stream, { size: state.size, newlines: state.newlines, endsWithNewline: state.endsWithNewline });
  return { logsStored: true, moved: rows[0].moved };
}
