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

  /**
   * The shared thing under `key`, made by `make` on the first call. `make` registers how to
   * release what it made as soon as it exists, so a thing half made (a container started that
   * never became ready) is released too.
   */
  shared<T>(key: string, make: (onRelease: (release: () => Promise<void>) => void) => Promise<T>): Promise<T> {
    let pending = this.made.get(key) as Promise<T> | undefined;
    if (pending === undefined) {
      pending = make((release) => this.releases.push(release));
      // Every step awaits it; a failure to make it is reported by each of them, not here.
      pending.catch(() => undefined);
      this.made.set(key, pending);
    }
    return pending;
  }

  /** Releases everything in reverse order of making; returns the messages of the releases that failed. */
  async releaseAll(): Promise<string[]> {
    const failures: string[] = [];
    for (const release of this.releases.splice(0).reverse()) {
      await release().catch((error: unknown) => failures.push(toError(error).message));
    }
    this.made.clear();
    return failures;
  }
}
