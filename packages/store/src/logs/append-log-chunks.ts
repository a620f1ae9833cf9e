import type { Db, Queryable } from '../db/types.js';
import { MAX_LOG_PIECE, RUN_LOG_CHANNEL, type LogStreamInfo } from './log-stream.js';

/** Rows in one INSERT: keeps the statement's parameters far below PostgreSQL's 65,535. */
export const ROWS_PER_INSERT = 1000;
const NEWLINE = 0x0a;

/** Bytes of one stream of an attempt's logs, at their byte offset in that stream. */
export interface NewLogChunk {
  stream: string;
  offset: number;
  data: Buffer;
}

/** A chunk that starts past the stream's end: storing it would leave a hole nobody could page over. */
export interface RefusedLogChunk {
  stream: string;
  offset: number;
  /** The stream's size when it came: where the next chunk must start. */
  expected: number;
}

export interface AppendResult {
  /** Bytes stored (resent bytes already held are not counted). */
  stored: number;
  refused: RefusedLogChunk[];
  /** Where each stream of the batch now ends. */
  ends: Map<string, LogStreamInfo>;
}

export interface StreamState {
  size: number;
  newlines: number;
  endsWithNewline: boolean;
  changed: boolean;
}

export interface Piece {
  stream: string;
  offset: number;
  linesBefore: number;
  newlines: number;
  data: Buffer;
}

function countNewlines(data: Buffer): number {
  let count = 0;
  for (let at = data.indexOf(NEWLINE); at !== -1; at = data.indexOf(NEWLINE, at + 1)) count += 1;
  return count;
}

/** Locks every stream the batch touches (creating missing ones) and reads where each ends. */
async function lockStreams(tx: Queryable, runId: number, attemptId: string, streams: string[]): Promise<Map<string, StreamState>> {
  const rows = await tx.query<{ stream: string; size: string; newlines: string; endsWithNewline: boolean }>(
    `INSERT INTO run_log_streams (run_id, attempt_id, stream) SELECT $1, $2, s FROM unnest($3::text[]) AS s ORDER BY s
     ON CONFLICT (run_id, attempt_id, stream) DO UPDATE SET size = run_log_streams.size
     RETURNING stream, size::text AS size, newlines::text AS newlines, ends_with_newline AS "endsWithNewline"`,
    [runId, attemptId, streams],
  );
  return new Map(rows.map((r) => [r.stream, { size: Number(r.size), newlines: Number(r.newlines), endsWithNewline: r.endsWithNewline, changed: false }]));
}

/**
 * What of `chunk` is new at the stream's end, cut into pieces: bytes already held (a resend, or
 * an overlap) are trimmed, so one copy of each byte is kept, whichever coordinator got it first.
 */
export function newPieces(state: StreamState, chunk: NewLogChunk): Piece[] {
  const skip = state.size - chunk.offset;
  if (skip >= chunk.data.length) return [];
  const fresh = chunk.data.subarray(skip);
  const pieces: Piece[] = [];
  for (let at = 0; at < fresh.length; at += MAX_LOG_PIECE) {
    const data = fresh.subarray(at, at + MAX_LOG_PIECE);
    const newlines = countNewlines(data);
    pieces.push({ stream: chunk.stream, offset: state.size, linesBefore: state.newlines, newlines, data });
    state.size += data.length;
    state.newlines += newlines;
    state.endsWithNewline = data[data.length - 1] === NEWLINE;
    state.changed = true;
  }
  return pieces;
}

async function insertPieces(tx: Queryable, runId: number, attemptId: string, pieces: Piece[]): Promise<void> {
  for (let from = 0; from < pieces.length; from += ROWS_PER_INSERT) {
    const rows = pieces.slice(from, from + ROWS_PER_INSERT);
    const params: unknown[] = [runId, attemptId];
    const values = rows.map((p) => {
      params.push(p.stream, p.offset, p.linesBefore, p.newlines, p.data);
      const n = params.length;
      return `($1, $2, $${n - 4}, $${n - 3}, $${n - 2}, $${n - 1}, $${n})`;
    });
    await tx.query(`INSERT INTO run_log_chunks (run_id, attempt_id, stream, byte_offset, lines_before, newlines, data) VALUES ${values.join(', ')}`, params);
  }
}

/** Saves where each changed stream now ends and, in the same statement, tells followers (once, at commit). */
async function saveStreams(tx: Queryable, runId: number, attemptId: string, states: Map<string, StreamState>): Promise<void> {
  const changed = [...states].filter(([, s]) => s.changed);
  if (changed.length === 0) return;
  await tx.query(
    `WITH saved AS (
       UPDATE run_log_streams s SET size = u.size, newlines = u.newlines, ends_with_newline = u.ends
       FROM unnest($3::text[], $4::bigint[], $5::bigint[], $6::boolean[]) AS u(stream, size, newlines, ends)
       WHERE s.run_id = $1 AND s.attempt_id = $2 AND s.stream = u.stream RETURNING 1)
     SELECT pg_notify($7, $1::text) FROM (SELECT 1 FROM saved LIMIT 1) AS any_saved`,
    [runId, attemptId, changed.map(([k]) => k), changed.map(([, s]) => s.size), changed.map(([, s]) => s.newlines), changed.map(([, s]) => s.endsWithNewline), RUN_LOG_CHANNEL],
  );
}

/**
 * Stores log chunks of one attempt, in one transaction, in the order given. Each stream's row is
 * locked first, so two coordinators storing the same resend keep one copy. A chunk that starts
 * past its stream's end is refused (and what follows it in the stream too, being past the end as
 * well), never stored with a hole before it. Followers are told at commit (RUN_LOG_CHANNEL).
 */
export async function appendLogChunks(db: Db, runId: number, attemptId: string, chunks: NewLogChunk[]): Promise<AppendResult> {
  if (chunks.length === 0) return { stored: 0, refused: [], ends: new Map() };
  return db.transaction(async (tx) => {
    const states = await lockStreams(tx, runId, attemptId, [...new Set(chunks.map((c) => c.stream))]);
    const pieces: Piece[] = [];
    const refused: RefusedLogChunk[] = [];
    for (const chunk of chunks) {
      const state = states.get(chunk.stream);
      if (state === undefined) continue;
      if (chunk.offset > state.size) refused.push({ stream: chunk.stream, offset: chunk.offset, expected: state.size });
      else pieces.push(...newPieces(state, chunk));
    }
    await insertPieces(tx, runId, attemptId, pieces);
    await saveStreams(tx, runId, attemptId, states);
    const ends = new Map([...states].map(([stream, s]) => [stream, { size: s.size, newlines: s.newlines, endsWithNewline: s.endsWithNewline }]));
    return { stored: pieces.reduce((sum, p) => sum + p.data.length, 0), refused, ends };
  });
}
