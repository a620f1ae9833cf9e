import { RunStatus } from '@trellis/core';
import type { SubRunHandle, SubRunRequest, SubRunResult } from '../types.js';

/** How a host queues a child run with its coordinator, waits for it and stops it. */
export interface SubRunQueue {
  /** Queues the child; resolves once the coordinator holds it (a resend of a queued child is harmless). */
  enqueue(): Promise<void>;
  /** Resolves with the child's outcome once it ended. */
  waitForEnd(): Promise<SubRunResult>;
  /**
   * Asks the coordinator to stop the child; called at most once, and only once it is queued. A
   * returned promise is awaited before the child's outcome counts.
   */
  stop(): Promise<void> | void;
}

/**
 * A sub-DAG run its coordinator queues and places: enqueue, wait for its end, and stop it when
 * the parent stops, whether the stop comes before or after the child is queued. A failure of
 * any of that ends the child Failed, with the reason.
 */
export function queuedSubRun(request: SubRunRequest, queue: SubRunQueue): SubRunHandle {
  let queued = false;
  let stopRequested = false;
  let stopping: Promise<void> | void | undefined;
  let stopped = false;
  const stopChild = (): void => {
    if (stopped) return;
    stopped = true;
    stopping = queue.stop();
  };
  const done = (async (): Promise<SubRunResult> => {
    await queue.enqueue();
    queued = true;
    if (stopRequested) stopChild();
    const result = await queue.waitForEnd();
    await stopping;
    return result;
  })().catch((error: unknown) => ({ status: RunStatus.Failed, outputs: {}, error: `sub-DAG run ${request.dagName}: ${error instanceof Error ? error.message : String(error)}` }));
  const stop = (): void => {
    stopRequested = true;
    if (queued) stopChild();
  };
  return { done, stop };
}
