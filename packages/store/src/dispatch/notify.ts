import type { Queryable } from '../db/types.js';

/** The channel on which every coordinator's dispatcher listens for new or freed work. */
export const DISPATCH_CHANNEL = 'trellis_dispatch';

/** Wakes the dispatchers of every coordinator on this database (delivered at commit). */
export async function notifyDispatch(q: Queryable): Promise<void> {
  await q.query('SELECT pg_notify($1, $2)', [DISPATCH_CHANNEL, '']);
}
