import type { Queryable } from '../db/types.js';
import type { LogStreamRef } from './log-stream.js';

/** How many bytes of a stream are stored; undefined when the stream has no row at all. */
export async function storedLogSize(q: Queryable, ref: LogStreamRef): Promise<number | undefined> {
  const rows = await q.query<{ size: string }>('SELECT size::text AS size FROM run_log_streams WHERE run_id = $1 AND attempt_id = $2 AND stream = $3', [ref.runId, ref.attemptId, ref.stream]);
  return rows[0] === undefined ? undefined : Number(rows[0].size);
}
