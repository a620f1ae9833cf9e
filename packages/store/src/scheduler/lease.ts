import type { Queryable } from '../db/types.js';

/**
 * Takes or renews the scheduler lease. A holder renewing keeps its token; a new holder
 * (the lease expired) gets the next one. Returns the token, or undefined while another
 * coordinator holds a live lease.
 */
export async function acquireSchedulerLease(q: Queryable, holder: string, ttlMs: number): Promise<number | undefined> {
  const [row] = await q.query<{ token: number }>(
    `INSERT INTO scheduler_lease (id, holder, token, expires_at) VALUES (1, $1, 1, now() + make_interval(secs => $2::float8 / 1000))
     ON CONFLICT (id) DO UPDATE SET
       token = CASE WHEN scheduler_lease.holder = EXCLUDED.holder THEN scheduler_lease.token ELSE scheduler_lease.token + 1 END,
       holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
     WHERE scheduler_lease.holder = EXCLUDED.holder OR scheduler_lease.expires_at < now()
     RETURNING token`,
    [holder, ttlMs],
  );
  return row?.token;
}

/**
 * Inside a tick's transaction: true while `holder` still holds a live lease with `token`. The
 * row stays locked until commit, so no other coordinator can take the lease mid-tick.
 */
export async function holdsSchedulerLease(q: Queryable, holder: string, token: number): Promise<boolean> {
  const rows = await q.query('SELECT 1 FROM scheduler_lease WHERE id = 1 AND holder = $1 AND token = $2 AND expires_at > now() FOR UPDATE', [holder, token]);
  return rows.length === 1;
}

/** A leader stepping down on shutdown lets a standby take over at once. */
export async function releaseSchedulerLease(q: Queryable, holder: string): Promise<void> {
  // In the past, not now(): a standby's next statement may read the very same now().
  await q.query("UPDATE scheduler_lease SET expires_at = now() - interval '1 second' WHERE id = 1 AND holder = $1", [holder]);
}
