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
 * Slots of a queue: configured global queues have theirs; sub-run queues are bounded by their
 * parent's own parallelism; a DAG-local queue runs one at a time (or the deprecated max_active_runs).
 */
export function queueLimitFor(globalQueues: Map<string, number>, dagMaxActiveRuns: (dagName: string) => number | undefined): (queueName: string) => number {
  return (queueName) => {
    const configured = globalQueues.get(queueName);
    if (configured !== undefined) return configured;
    if (queueName.endsWith('/sub')) return Number.MAX_SAFE_INTEGER;
    return dagMaxActiveRuns(queueName) ?? 1;
  };
}
