import type { Queryable } from '../db/types.js';
import { TERMINAL } from '../db/run-status-sql.js';
import { MAX_LOG_PIECE, type LogStreamInfo, type LogStreamRef } from './log-stream.js';

/**
 * A piece's bytes leave the database as base64 text, decoded here. Over pg's text protocol a
 * bytea arrives as hex, twice its size: a 64 KiB piece became a 128 KiB string, which V8 puts in
 * its large-object space, and each such string cost about 0.8 ms to make against some 20 us for
 * the same bytes in base64 (88 KiB with PostgreSQL's line breaks, which the decoder skips).
 */
const base64 = (sql: string): string => `encode(${sql}, 'base64')`;

interface StreamRow {
  size: string;
  newlines: string;
  endsWithNewline: boolean;
}

const STREAM_COLUMNS = `s.size::text AS size, s.newlines::text AS newlines, s.ends_with_newline AS "endsWithNewline"`;

function streamInfo(row: StreamRow): LogStreamInfo {
  return { size: Number(row.size), newlines: Number(row.newlines), endsWithNewline: row.endsWithNewline };
}

/**
 * A stream (undefined when nothing was stored for it) and its last `window` bytes, in one
 * statement: a tail's usual single read. The pieces are found by a range of the primary key
 * from the stream's size (LATERAL, so the size bounds the index scan): a join condition on
 * the size was applied as a filter after scanning every piece of the stream, a cost that grew
 * with the log (1,600 index entries and heap rows for 100 MB).
 *
 * `endedOnly`: only while the stream's attempt is still its run's current one and the run has
 * ended (else undefined), so a reader that remembered where an ended run's log is stored reads
 * its tail in one round trip, and finds out in the same one when the run was retried or deleted.
 */
export async function logTail(q: Queryable, ref: LogStreamRef, window: number, endedOnly = false): Promise<{ info: LogStreamInfo; bytes: Buffer } | undefined> {
  const ended = endedOnly ? `AND EXISTS (SELECT 1 FROM runs r WHERE r.id = s.run_id AND r.attempt_id = s.attempt_id AND r.status IN (${TERMINAL}))` : '';
  const rows = await q.query<StreamRow & { data: string | null }>(
    `SELECT ${STREAM_COLUMNS}, ${base64('substring(c.data FROM (greatest(s.size - $4::bigint - c.byte_offset, 0) + 1)::int)')} AS data
     FROM run_log_streams s
     LEFT JOIN LATERAL (
       SELECT byte_offset, data FROM run_log_chunks c
       WHERE c.run_id = s.run_id AND c.attempt_id = s.attempt_id AND c.stream = s.stream
         AND c.byte_offset > s.size - $4::bigint - $5::bigint AND c.byte_offset < s.size
       ORDER BY c.byte_offset) c ON c.byte_offset + length(c.data) > s.size - $4::bigint
     WHERE s.run_id = $1 AND s.attempt_id = $2 AND s.stream = $3 ${ended}
     ORDER BY c.byte_offset`,
    [ref.runId, ref.attemptId, ref.stream, window, MAX_LOG_PIECE],
  );
  const first = rows[0];
  if (first === undefined) return undefined;
  return { info: streamInfo(first), bytes: Buffer.concat(rows.flatMap((r) => (r.data === null ? [] : [Buffer.from(r.data, 'base64')]))) };
}

/** The stream's lines in SQL: a final line without a newline counts. */
const STREAM_LINES = 's.newlines + CASE WHEN s.size > 0 AND NOT s.ends_with_newline THEN 1 ELSE 0 END';

/**
 * A stream (undefined when nothing was stored for it) and where the piece holding the start of
 * 0-based line `line` begins: the last piece with fewer newlines before it than `line` (the one
 * holding newline number `line`), found through the line index, in one statement. With
 * `fromEnd`, `line` counts back from the stream's end: the first of its last `line` lines.
 */
export async function logLineStart(q: Queryable, ref: LogStreamRef, line: number, fromEnd = false): Promise<{ info: LogStreamInfo; offset: number; linesBefore: number } | undefined> {
  const rows = await q.query<StreamRow & { offset: string | null; linesBefore: string | null }>(
    `SELECT ${STREAM_COLUMNS}, c.byte_offset::text AS offset, c.lines_before::text AS "linesBefore"
     FROM run_log_streams s
     LEFT JOIN LATERAL (
       SELECT byte_offset, lines_before FROM run_log_chunks c
       WHERE c.run_id = s.run_id AND c.attempt_id = s.attempt_id AND c.stream = s.stream AND c.lines_before < ${fromEnd ? `${STREAM_LINES} - $4` : '$4'}
       ORDER BY c.lines_before DESC, c.byte_offset DESC LIMIT 1) c ON true
     WHERE s.run_id = $1 AND s.attempt_id = $2 AND s.stream = $3`,
    [ref.runId, ref.attemptId, ref.stream, line],
  );
  const row = rows[0];
  if (row === undefined) return undefined;
  return { info: streamInfo(row), offset: Number(row.offset ?? 0), linesBefore: Number(row.linesBefore ?? 0) };
}

/**
 * The stored bytes [from, to) of a stream (fewer when it holds less): only the parts of the
 * pieces in the range leave the database, so a page never moves much more than it shows.
 */
export async function logBytes(q: Queryable, ref: LogStreamRef, from: number, to: number): Promise<Buffer> {
  if (to <= from) return Buffer.alloc(0);
  const piece = 'substring(data FROM (greatest($4::bigint - byte_offset, 0) + 1)::int FOR (least($5::bigint, byte_offset + length(data)) - greatest($4::bigint, byte_offset))::int)';
  const rows = await q.query<{ data: string }>(
    `SELECT ${base64(piece)} AS data
     FROM run_log_chunks WHERE run_id = $1 AND attempt_id = $2 AND stream = $3
       AND byte_offset > $4::bigint - $6::bigint AND byte_offset < $5::bigint AND byte_offset + length(data) > $4::bigint
     ORDER BY byte_offset`,
    [ref.runId, ref.attemptId, ref.stream, from, to, MAX_LOG_PIECE],
  );
  return Buffer.concat(rows.map((r) => Buffer.from(r.data, 'base64')));
}
