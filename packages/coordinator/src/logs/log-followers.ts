import { RUN_LOG_CHANNEL, type Db } from '@trellis/store';
import { toError } from '@trellis/core';
import type { Logger } from '../logging/logger.js';

interface Follower {
  wake: () => void;
  /** The coordinator is shutting down: end the stream. */
  end: () => void;
}

/**
 * Wakes the followers of a run's logs (the log event streams) when its chunks are stored:
 * chunks this coordinator stored tell it directly, chunks stored by another coordinator arrive
 * as a NOTIFY on RUN_LOG_CHANNEL (PostgreSQL; PGlite is one process, where the direct call is
 * all there is). One listening connection, opened with the first follower; a follower also
 * looks on its own now and then, so a notification lost in a reconnect delays it only.
 */
export class LogFollowers {
  private readonly byRun = new Map<number, Set<Follower>>();
  private listening: Promise<(() => Promise<void>) | undefined> | undefined;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
  ) {}

  /** Chunks of this run were stored (here, or elsewhere as a notification says). */
  appended(runId: number): void {
    for (const follower of this.byRun.get(runId) ?? []) follower.wake();
  }

  /** Calls `wake` each time the run's logs grow, until the returned function is called; `end` at shutdown. */
  async follow(runId: number, wake: () => void, end: () => void): Promise<() => void> {
    await this.listen();
    const follower = { wake, end };
    const set = this.byRun.get(runId) ?? new Set<Follower>();
    set.add(follower);
    this.byRun.set(runId, set);
    return () => {
      set.delete(follower);
      if (set.size === 0 && this.byRun.get(runId) === set) this.byRun.delete(runId);
    };
  }

  async stop(): Promise<void> {
    const all = [...this.byRun.values()].flatMap((set) => [...set]);
    this.byRun.clear();
    for (const follower of all) follower.end();
    const unlisten = await this.listening;
    this.listening = undefined;
    await unlisten?.();
  }

  private listen(): Promise<(() => Promise<void>) | undefined> {
    const { db } = this;
    if (db.listen === undefined || !db.capabilities.crossProcessNotify) return Promise.resolve(undefined);
    this.listening ??= db
      .listen(RUN_LOG_CHANNEL, (payload) => this.appended(Number(payload)), (error) => this.logger.warn('log notifications interrupted; reconnecting', { error }))
      .catch((error: unknown) => {
        // Followers still look on their own; the next follower tries to listen again.
        this.listening = undefined;
        this.logger.warn('could not listen for log notifications', { error: toError(error) });
        return undefined;
      });
    return this.listening;
  }
}
