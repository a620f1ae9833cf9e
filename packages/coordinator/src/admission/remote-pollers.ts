import { admitQueuedRuns, hasQueuedRuns, type Db, type RunRecord } from '@trellis/store';
import { toError } from '@trellis/core';
import type { Logger } from '../logging/logger.js';
import { SerialPass } from './serial-pass.js';
import { DEFAULT_QUEUE_LIMIT, type QueueLimits } from './placement.js';

/** A run leased to a worker, and the profile counter as its admission saw it (see ProfileService.resolve). */
export interface LeasedRun {
  run: RunRecord;
  profilesVersion: number;
}

interface Waiter {
  resolve: (leased: LeasedRun | undefined) => void;
  timer: NodeJS.Timeout;
  done: boolean;
}

interface WaitingWorker {
  labels: Record<string, string>;
  waiters: Waiter[];
}

export interface RemotePollersDeps {
  db: Db;
  logger: Logger;
  limits: QueueLimits;
  /** A lease could not be handed over (its poller left): the run goes straight back to the queue. */
  release: (run: RunRecord) => Promise<void>;
}

/**
 * Long-polling workers wait here. Admission for a worker runs only while one of its pollers
 * waits, so a run is leased exactly when someone can take it; every wake (new work, a freed
 * slot, a notification from another coordinator) tries again for every waiting worker.
 */
export class RemotePollers {
  private readonly workers = new Map<string, WaitingWorker>();
  private readonly passes = new SerialPass(() => this.admitAll());
  /** A remote run was queued since the last pass began: the probe for one can be skipped. */
  private remoteQueued = false;

  constructor(private readonly deps: RemotePollersDeps) {}

  /** Waits up to `waitMs` for a run this worker may take; undefined means "poll again". */
  poll(workerId: string, labels: Record<string, string>, waitMs: number, cancelled: (onCancel: () => void) => void): Promise<LeasedRun | undefined> {
    return new Promise((resolve) => {
      const entry = this.workers.get(workerId) ?? { labels, waiters: [] };
      entry.labels = labels;
      this.workers.set(workerId, entry);
      const waiter: Waiter = {
        done: false,
        resolve: (leased) => {
          waiter.done = true;
          clearTimeout(waiter.timer);
          entry.waiters = entry.waiters.filter((w) => w !== waiter);
          resolve(leased);
        },
        timer: setTimeout(() => waiter.resolve(undefined), waitMs),
      };
      entry.waiters.push(waiter);
      cancelled(() => {
        if (!waiter.done) waiter.resolve(undefined);
      });
      this.wake();
    });
  }

  /** Pollers waiting now, per worker (for conditions and metrics). */
  waitingCount(workerId: string): number {
    return this.workers.get(workerId)?.waiters.length ?? 0;
  }

  wake(queued = false): void {
    if (queued) this.remoteQueued = true;
    this.passes.request();
  }

  async stop(): Promise<void> {
    await this.passes.stop();
    for (const entry of this.workers.values()) for (const waiter of [...entry.waiters]) waiter.resolve(undefined);
  }

  private async admitAll(): Promise<boolean> {
    const waiting = [...this.workers].filter(([, entry]) => entry.waiters.length > 0);
    const queued = this.remoteQueued;
    this.remoteQueued = false;
    if (waiting.length === 0) return false;
    // One cheap probe instead of an admission transaction per idle worker when only local work moved.
    if (!queued && !(await hasQueuedRuns(this.deps.db, 'remote').catch(() => true))) return false;
    for (const [workerId, entry] of waiting) {
      if (entry.waiters.length === 0) continue;
      await this.admitFor(workerId, entry).catch((error: unknown) => this.deps.logger.error('remote admission failed; retrying on the next wake', { workerId, error: toError(error) }));
    }
    return false;
  }

  private async admitFor(workerId: string, entry: WaitingWorker): Promise<void> {
    const { runs, profilesVersion } = await admitQueuedRuns(this.deps.db, {
      limits: this.deps.limits.explicit(),
      defaultLimit: DEFAULT_QUEUE_LIMIT,
      workerId,
      target: { kind: 'remote', labels: entry.labels },
      batch: entry.waiters.length,
    });
    for (const run of runs) {
      const waiter = entry.waiters.find((w) => !w.done);
      if (waiter !== undefined) waiter.resolve({ run, profilesVersion });
      else await this.deps.release(run);
    }
  }
}
