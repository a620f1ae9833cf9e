import { isTerminalRunStatus, type RunStatus } from '@trellis/core';
import { getOutputs, getRun, type Queryable } from '@trellis/store';

/** How often a wait looks at the run again. */
const WAIT_RUN_POLL_MS = 200;

/** Where a waited-for run stands when the wait returns. */
export type RunWaitResult =
  | { state: 'missing' }
  /** The wait ran out (its time, or its signal) before the run ended. */
  | { state: 'pending'; status: RunStatus }
  | { state: 'finished'; status: RunStatus; outputs: Record<string, string>; error: string };

export interface RunWaitOptions {
  /** Give up after this long (the answer is then `pending`); default: wait until the run ends. */
  waitMs?: number;
  /** Give up when this aborts (a cancelled call, a shutdown). */
  signal?: AbortSignal;
  /**
   * Subscribes `wake` to news that the run may have ended (the local executor hosts it), so the
   * wait looks again at once rather than at the next poll; returns the unsubscribe.
   */
  wakeOn?: (wake: () => void) => () => void;
}

/**
 * Waits for a run to end, looking at it every WAIT_RUN_POLL_MS: a worker's WaitRun for a
 * child it started, and the local executor for a child it queued for a worker. A run only
 * ends once, in the database, whichever coordinator or worker ran it, so polling it there
 * covers every case.
 */
export async function waitForRunEnd(q: Queryable, dagName: string, dagRunId: string, options: RunWaitOptions = {}): Promise<RunWaitResult> {
  const deadline = options.waitMs !== undefined ? Date.now() + options.waitMs : Number.POSITIVE_INFINITY;
  const wake = new Wake();
  const unsubscribe = options.wakeOn?.(() => wake.fire());
  try {
    for (;;) {
      // Armed before the look: an end reported while the query runs is not missed.
      wake.arm();
      const run = await getRun(q, dagName, dagRunId);
      if (run === undefined) return { state: 'missing' };
      if (isTerminalRunStatus(run.status)) {
        const outputs = await getOutputs(q, run.id);
        // Stored outputs are the run's map of name to string value.
        return { state: 'finished', status: run.status, outputs: (outputs?.outputs ?? {}) as Record<string, string>, error: run.error };
      }
      const left = deadline - Date.now();
      if (left <= 0 || options.signal?.aborted === true) return { state: 'pending', status: run.status };
      await wake.pause(Math.min(WAIT_RUN_POLL_MS, left), options.signal);
    }
  } finally {
    unsubscribe?.();
  }
}

/** A poll's sleep that news of the run cuts short. */
class Wake {
  private fired = false;
  private cut: (() => void) | undefined;

  arm(): void {
    this.fired = false;
  }

  fire(): void {
    this.fired = true;
    this.cut?.();
  }

  /** Sleeps `ms`, or less when the signal aborts or the wake fires; leaves no timer or listener behind. */
  pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
    if (this.fired) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        this.cut = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener('abort', done, { once: true });
      this.cut = done;
    });
  }
}
