import type { Queryable } from '../db/types.js';

/** The channel on which every coordinator's dispatcher listens for new or freed work. */
export const DISPATCH_CHANNEL = 'trellis_dispatch';

/**
 * Wakes the dispatchers of every coordinator on this database (delivered at commit). The
 * payload names the sender, so a coordinator can skip the echo of its own notification.
 */
export async function notifyDispatch(q: Queryable, sender: string): Promise<void> {
  await q.query('SELECT pg_notify($1, $2)', [DISPATCH_CHANNEL, sender]);
}
