/**
 * Whether `work` settles within `ms`: how a host waits out a shutdown grace for its runs. The
 * timer is cleared when the work wins, so a drained shutdown is not held open until it fires.
 */
export async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([work.then(() => true as const), expired]);
  } finally {
    clearTimeout(timer);
  }
}
