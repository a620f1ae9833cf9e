import type { WorkerSelector } from '@trellis/core';
import type { DispatchTarget } from '@trellis/store';

export interface Placement {
  dispatchTarget: DispatchTarget;
  workerSelector: Record<string, string>;
}

export type ExecutionMode = 'local' | 'distributed';

/** `local` and no selector run on the coordinator unless the default mode is distributed; labels need a worker. */
export function placementOf(selector: WorkerSelector | undefined, defaultMode: ExecutionMode): Placement {
  if (selector?.kind === 'labels') return { dispatchTarget: 'remote', workerSelector: selector.labels };
  if (selector?.kind === 'local' || defaultMode === 'local') return { dispatchTarget: 'local', workerSelector: {} };
  return { dispatchTarget: 'remote', workerSelector: {} };
}

/** The queue a sub-DAG run waits in: its own, unlimited, so children never wait behind their parent. */
export function subRunQueue(parentQueue: string): string {
  return `${parentQueue}/sub`;
}

/**
 * Slots of a queue: configured global queues have theirs; a DAG-local queue runs one at a time
 * (or the deprecated max_active_runs); sub-run queues are bounded by their parent's own
 * parallelism. The database's trellis_admit (migration 0010) applies the same rule to the
 * explicit limits this class hands it.
 */
export class QueueLimits {
  private cached: Map<string, number> | undefined;

  constructor(
    private readonly globalQueues: Map<string, number>,
    /** DAG name and max_active_runs of every DAG that sets it. */
    private readonly dagLimits: () => Iterable<[string, number]>,
  ) {}

  /** The DAG definitions changed. */
  invalidate(): void {
    this.cached = undefined;
  }

  /** Queues with a limit of their own; a configured global queue wins over a DAG of the same name. */
  explicit(): Map<string, number> {
    this.cached ??= new Map([...this.dagLimits(), ...this.globalQueues]);
    return this.cached;
  }

  limitOf(queueName: string): number {
    const explicit = this.explicit().get(queueName);
    if (explicit !== undefined) return explicit;
    return queueName.endsWith('/sub') ? Number.MAX_SAFE_INTEGER : DEFAULT_QUEUE_LIMIT;
  }
}

/** Slots of a queue nobody configured: the DAG-local FIFO queue. */
export const DEFAULT_QUEUE_LIMIT = 1;
