/** Waits `ms`, or less when the signal aborts; leaves no timer or listener behind. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolveSleep) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolveSleep();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
