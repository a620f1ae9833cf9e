import { toError } from '@trellis/core';

/**
 * What the steps of one run share, such as the container a DAG-level `container:` names: made
 * by the first step that needs it, handed to every later one, released once the run has ended
 * (after its handlers, which use it too). The runner knows nothing of what is shared, so the
 * executors that make such things stay loaded on first use.
 */
export class RunResources {
  private readonly made = new Map<string, Promise<unknown>>();
  private readonly releases: Array<() => Promise<void>> = [];
  private released = false;

  /**
   * The shared thing under `key`, made by `make` on the first call. `make` registers how to
   * release what it made as soon as it exists, so a thing half made is released too. A make
   * that failed (its step was stopped while it waited) is tried again by the next caller.
   */
  shared<T>(key: string, make: (onRelease: (release: () => Promise<void>) => void) => Promise<T>): Promise<T> {
    const existing = this.made.get(key) as Promise<T> | undefined;
    if (existing !== undefined) return existing;
    const pending = make((release) => this.register(release));
    this.made.set(key, pending);
    // Every caller awaits it and reports a failure; here it only makes room for another try.
    pending.catch(() => {
      if (this.made.get(key) === pending) this.made.delete(key);
    });
    return pending;
  }

  /** Releases everything in reverse order of making; returns the messages of the releases that failed. */
  async releaseAll(): Promise<string[]> {
    this.released = true;
    const failures: string[] = [];
    for (const release of this.releases.splice(0).reverse()) {
      await release().catch((error: unknown) => failures.push(toError(error).message));
    }
    this.made.clear();
    return failures;
  }

  /** A make still under way when the run ended (its step was stopped) releases what it made at once. */
  private register(release: () => Promise<void>): void {
    if (this.released) void release().catch(() => undefined);
    else this.releases.push(release);
  }
}
