/**
 * Work that must not interleave, per key, within this process: each call for a key runs once the
 * previous one for that key has settled (whether it failed or not), and a key's entry goes once
 * its last call has. Across processes it excludes nothing; callers that need that add a lock.
 */
export class KeyedTurns<K = string> {
  private readonly last = new Map<K, Promise<unknown>>();

  run<T>(key: K, fn: () => Promise<T>): Promise<T> {
    const next = (this.last.get(key) ?? Promise.resolve()).catch(() => undefined).then(fn);
    this.last.set(key, next);
    void next
      .finally(() => {
        if (this.last.get(key) === next) this.last.delete(key);
      })
      .catch(() => undefined);
    return next;
  }
}
