/** SQLSTATEs and socket errors worth one more try: serialization, deadlock, server starting, dropped connection. */
const TRANSIENT_CODES = new Set(['40001', '40P01', '57P03', '08006', '08003', '08001', 'ECONNRESET', 'ECONNREFUSED', 'EPIPE']);
const ATTEMPTS = 4;

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
