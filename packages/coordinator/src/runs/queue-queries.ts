import { NotFoundError } from '@trellis/core';
import { queueCounts, queueItems, type Db } from '@trellis/store';
import { runSummary } from './payloads.js';

export interface QueueQueriesDeps {
  db: Db;
  globalQueues: Map<string, number>;
  /** A DAG of this name exists: its DAG-based queue exists even while empty. */
  isDag: (name: string) => boolean;
}

/** How many running runs a queue summary lists. */
const RUNNING_SHOWN = 50;

/** Reading queues: global ones (configured) and DAG-based ones, with the runs they hold. */
export class QueueQueries {
  constructor(private readonly deps: QueueQueriesDeps) {}

  /** Every known queue with its counts and running runs, and the totals over them. */
  async overview() {
    const queues = await Promise.all(
      (await this.knownQueues()).map(async ({ name, counts }) => {
        const global = this.deps.globalQueues.has(name);
        const running = await queueItems(this.deps.db, name, 'running', RUNNING_SHOWN, 0);
        return {
          name,
          type: global ? 'global' : 'dag-based',
          ...(global ? { maxConcurrency: this.deps.globalQueues.get(name) } : {}),
          runningCount: counts.running,
          queuedCount: counts.queued,
          running: running.items.map((r) => runSummary(r)),
        };
      }),
    );
    const globalCapacity = [...this.deps.globalQueues.values()].reduce((a, b) => a + b, 0);
    const globalRunning = queues.filter((q) => q.type === 'global').reduce((a, q) => a + q.runningCount, 0);
    return {
      queues,
      summary: {
        totalQueues: queues.length,
        totalRunning: queues.reduce((a, q) => a + q.runningCount, 0),
        totalQueued: queues.reduce((a, q) => a + q.queuedCount, 0),
        globalCapacity,
        globalAvailable: Math.max(0, globalCapacity - globalRunning),
      },
    };
  }

  /** A page of one queue's runs, queued (oldest first) or running, with the total; an unknown queue is not found. */
  async items(name: string, type: 'queued' | 'running', limit: number, offset: number) {
    const counts = (await queueCounts(this.deps.db)).get(name);
    if (counts === undefined && !this.deps.globalQueues.has(name) && !this.deps.isDag(name)) throw new NotFoundError(`queue ${name} not found`, { name });
    const page = await queueItems(this.deps.db, name, type, limit, offset);
    return { items: page.items.map((r) => runSummary(r)), total: page.total };
  }

  /** Configured global queues always; DAG-based ones while they hold runs. */
  private async knownQueues() {
    const counts = await queueCounts(this.deps.db);
    const names = [...new Set([...this.deps.globalQueues.keys(), ...counts.keys()])].sort();
    return names.map((name) => ({ name, counts: counts.get(name) ?? { queued: 0, running: 0 } }));
  }
}
