/** SQLSTATEs and socket errors worth one more try: serialization, deadlock, server starting, dropped connection. */
const TRANSIENT_CODES = new Set(['40001', '40P01', '57P03', '08006', '08003', '08001', 'ECONNRESET', 'ECONNREFUSED', 'EPIPE']);
const ATTEMPTS = 4;

/** Socket errors of a server that cannot be reached, and SQLSTATEs of one shutting down, starting, or gone. */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', '57P01', '57P02', '57P03']);
/** What `pg` throws, without a code, when a connection drops or cannot be made in time. */
const CONNECTION_MESSAGES = /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|Client was closed and is not queryable)/;

export function isTransient(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && TRANSIENT_CODES.has(code);
}

/** Retries only what is known to be transient, with jittered exponential backoff. */
export async function withTransientRetry<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await fn();
    } catch (error) {
      if (!isTransient(error) || attempt >= ATTEMPTS) throw error;
      const delay = 20 * 2 ** attempt * (0.5 + Math.random());
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

/**
 * The database cannot be reached (down, restarting, unreachable), as opposed to a statement it
 * refused: what the API answers 503 for. Class 08 is "connection exception"; a connect to a
 * name with several addresses fails with an AggregateError of one error per address.
 */
export function isConnectionError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (CONNECTION_CODES.has(code) || code.startsWith('08'))) return true;
  if (error instanceof AggregateError) return error.errors.some(isConnectionError);
  return error instanceof Error && CONNECTION_MESSAGES.test(error.message);
}
