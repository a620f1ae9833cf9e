import type { Queryable } from '../db/types.js';
import { MAX_LOG_PIECE } from './append-log-chunks.js';

/** One log of one attempt as stored: its size, its newlines, and whether its last byte is one. */
export interface LogStreamInfo {
  size: number;
  newlines: number;
  endsWithNewline: boolean;
}

/** One stored piece of a log and where it lies in it. */
export interface LogPiece {
  offset: number;
  linesBefore: number;
  data: Buffer;
}

export interface LogStreamRef {
  runId: number;
  attemptId: string;
  stream: string;
}

interface PieceRow {
  offset: string;
  linesBefore: string;
  data: Uint8Array;
}

const PIECE_COLUMNS = `byte_offset::text AS offset, lines_before::text AS "linesBefore", data`;

/** pg hands bytea out as a Buffer, PGlite as a Uint8Array: a Buffer over the same memory either way. */
function piece(row: PieceRow): LogPiece {
  const data = Buffer.isBuffer(row.data) ? row.data : Buffer.from(row.data.buffer, row.data.byteOffset, row.data.byteLength);
  return { offset: Number(row.offset), linesBefore: Number(row.linesBefore), data };
}

export async function getLogStream(q: Queryable, ref: LogStreamRef): Promise<LogStreamInfo | undefined> {
  const rows = await q.query<{ size: string; newlines: string; endsWithNewline: boolean }>(
    `SELECT size::text AS size, newlines::text AS newlines, ends_with_newline AS "endsWithNewline" FROM run_log_streams WHERE run_id = $1 AND attempt_id = $2 AND stream = $3`,
    [ref.runId, ref.attemptId, ref.stream],
  );
  const row = rows[0];
  return row === undefined ? undefined : { size: Number(row.size), newlines: Number(row.newlines), endsWithNewline: row.endsWithNewline };
}

/**
 * Where the piece holding the start of 0-based line `line` begins: the last piece with fewer
 * newlines before it than `line` (the one holding newline number `line`), read from the line index.
 */
export async function pieceOfLine(q: Queryable, ref: LogStreamRef, line: number): Promise<{ offset: number; linesBefore: number }> {
  if (line === 0) return { offset: 0, linesBefore: 0 };
  const rows = await q.query<{ offset: string; linesBefore: string }>(
    `SELECT byte_offset::text AS offset, lines_before::text AS "linesBefore" FROM run_log_chunks
     WHERE run_id = $1 AND attempt_id = $2 AND stream = $3 AND lines_before < $4
     ORDER BY lines_before DESC, byte_offset DESC LIMIT 1`,
    [ref.runId, ref.attemptId, ref.stream, line],
  );
  const row = rows[0];
  return row === undefined ? { offset: 0, linesBefore: 0 } : { offset: Number(row.offset), linesBefore: Number(row.linesBefore) };
}

/** Up to `limit` pieces from byte `from` on, in order. */
export async function logPiecesFrom(q: Queryable, ref: LogStreamRef, from: number, limit: number): Promise<LogPiece[]> {
  const rows = await q.query<PieceRow>(
    `SELECT ${PIECE_COLUMNS} FROM run_log_chunks WHERE run_id = $1 AND attempt_id = $2 AND stream = $3 AND byte_offset >= $4 ORDER BY byte_offset LIMIT $5`,
    [ref.runId, ref.attemptId, ref.stream, from, limit],
  );
  return rows.map(piece);
}

/** Up to `limit` pieces that start before byte `before`, last first. */
export async function logPiecesBefore(q: Queryable, ref: LogStreamRef, before: number, limit: number): Promise<LogPiece[]> {
  const rows = await q.query<PieceRow>(
    `SELECT ${PIECE_COLUMNS} FROM run_log_chunks WHERE run_id = $1 AND attempt_id = $2 AND stream = $3 AND byte_offset < $4 ORDER BY byte_offset DESC LIMIT $5`,
    [ref.runId, ref.attemptId, ref.stream, before, limit],
  );
  return rows.map(piece);
}

/** Up to `limit` pieces holding the bytes from `from` on, in order (the first may start before `from`). */
export async function logPiecesCovering(q: Queryable, ref: LogStreamRef, from: number, limit: number): Promise<LogPiece[]> {
  const rows = await q.query<PieceRow>(
    `SELECT ${PIECE_COLUMNS} FROM run_log_chunks WHERE run_id = $1 AND attempt_id = $2 AND stream = $3
       AND byte_offset > $4::bigint - $6::bigint AND byte_offset + length(data) > $4::bigint ORDER BY byte_offset LIMIT $5`,
    [ref.runId, ref.attemptId, ref.stream, from, limit, MAX_LOG_PIECE],
  );
  return rows.map(piece);
}
