import type { Queryable } from '@trellis/store';
import { toError } from '@trellis/core';

export interface DatabaseHealth {
  ok: boolean;
  /** Why the database does not answer (absent when it does). */
  error?: string;
}

/** How long one answer of the probe stands: however often /health is asked, the database sees one probe per period. */
const FRESH_MS = 1000;
/** A probe not answered by then counts as a failure (a server that does not even refuse the connection). */
const TIMEOUT_MS = 2000;

/**
 * Whether the database answers `SELECT 1`: a cheap probe, cached for a second and shared by
 * concurrent callers; a probe still unanswered is waited for, never doubled.
 */
export class DatabaseProbe {
  private last: { at: number; health: DatabaseHealth } | undefined;
  private checking: Promise<DatabaseHealth> | undefined;
  private query: Promise<unknown> | undefined;

  constructor(private readonly db: Queryable) {}

  check(): Promise<DatabaseHealth> {
    if (this.last !== undefined && Date.now() - this.last.at < FRESH_MS) return Promise.resolve(this.last.health);
    this.checking ??= this.probe()
      .then((health) => {
        this.last = { at: Date.now(), health };
        return health;
      })
      .finally(() => {
        this.checking = undefined;
      });
    return this.checking;
  }

  private async probe(): Promise<DatabaseHealth> {
    this.query ??= this.db.query('SELECT 1').finally(() => {
      this.query = undefined;
    });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
    });
    try {
      await Promise.race([this.query, late]);
      return { ok: true };
    } catch (error) {
      const cause = toError(error);
      // A refused connection to a name with several addresses is an AggregateError without a message.
      const { code } = cause as { code?: unknown };
      const reason = cause.message !== '' ? cause.message : typeof code === 'string' ? code : cause.name;
      return { ok: false, error: `the database is unreachable: ${reason}` };
    } finally {
      clearTimeout(timer);
    }
  }
}
