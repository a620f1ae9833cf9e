import type { Queryable } from '../db/types.js';

/** What failed logins are counted against: the account tried, and where the attempt came from. */
export interface ThrottleKey {
  scope: 'username' | 'address';
  subject: string;
}

export interface ThrottlePolicy {
  /** Failures within the window that block the key. */
  maxFailures: number;
  windowSec: number;
  blockSec: number;
}

/** Seconds until the last block among `keys` ends; 0 when none is blocked. */
export async function loginBlockedFor(q: Queryable, keys: ThrottleKey[]): Promise<number> {
  const [row] = await q.query<{ seconds: number }>(
    `SELECT COALESCE(MAX(CEIL(EXTRACT(EPOCH FROM blocked_until - now()))), 0)::int AS seconds FROM login_failures
     WHERE (scope, subject) IN (SELECT * FROM unnest($1::text[], $2::text[])) AND blocked_until > now()`,
    [keys.map((k) => k.scope), keys.map((k) => k.subject)],
  );
  return row?.seconds ?? 0;
}

/** Counts one failure; the one that reaches the limit blocks the key for `blockSec` and starts a new count. */
export async function recordLoginFailure(q: Queryable, key: ThrottleKey, policy: ThrottlePolicy): Promise<void> {
  await q.query(
    `INSERT INTO login_failures AS f (scope, subject, failures, window_started_at) VALUES ($1, $2, 1, now())
     ON CONFLICT (scope, subject) DO UPDATE SET
       failures = CASE WHEN f.window_started_at < now() - $3 * interval '1 second' THEN 1 ELSE f.failures + 1 END,
       window_started_at = CASE WHEN f.window_started_at < now() - $3 * interval '1 second' THEN now() ELSE f.window_started_at END`,
    [key.scope, key.subject, policy.windowSec],
  );
  await q.query(
    `UPDATE login_failures SET blocked_until = now() + $4 * interval '1 second', failures = 0, window_started_at = now()
     WHERE scope = $1 AND subject = $2 AND failures >= $3`,
    [key.scope, key.subject, policy.maxFailures, policy.blockSec],
  );
}

/** A successful login forgets the account's failures (not the address's: one known password must not reset a guesser). */
export async function clearLoginFailures(q: Queryable, key: ThrottleKey): Promise<void> {
  await q.query('DELETE FROM login_failures WHERE scope = $1 AND subject = $2', [key.scope, key.subject]);
}
