import { isTerminalRunStatus, type RunStatus } from '@trellis/core';
import { getOutputs, getRun, type Queryable, type RunRecord } from '@trellis/store';

/** How often a wait looks at the run again when nothing woke it. */
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
   * Subscribes `wake` to news that the run may have changed (see RunEnds), so the wait looks
   * again at once rather than at the next poll; returns the unsubscribe.
   */
  wakeOn?: (wake: () => void) => () => void;
  /** How often to look again without news; default WAIT_RUN_POLL_MS (tests lengthen it to show that a wake, not the poll, ended a wait). */
  pollMs?: number;
}

/** Where a watched run stands when the watch returns. */
export type RunWatchResult = { state: 'missing' } | { state: 'pending'; run: RunRecord } | { state: 'reached'; run: RunRecord };

/**
 * Watches a run until `reached` says its record is where the caller wants it (or the wait runs
 * out), looking at it every `pollMs` or when woken. A run's status changes only in the
 * database, whichever coordinator or worker runs it, so polling it there covers every case.
 */
export async function waitForRun(q: Queryable, dagName: string, dagRunId: string, reached: (run: RunRecord) => boolean, options: RunWaitOptions = {}): Promise<RunWatchResult> {
  const deadline = options.waitMs !== undefined ? Date.now() + options.waitMs : Number.POSITIVE_INFINITY;
  const wake = new Wake();
  const unsubscribe = options.wakeOn?.(() => wake.fire());
  try {
    for (;;) {
      // Armed before the look: a change reported while the query runs is not missed.
      wake.arm();
      const run = await getRun(q, dagName, dagRunId);
      if (run === undefined) return { state: 'missing' };
      if (reached(run)) return { state: 'reached', run };
      const left = deadline - Date.now();
      if (left <= 0 || options.signal?.aborted === true) return { state: 'pending', run };
      await wake.pause(Math.min(options.pollMs ?? WAIT_RUN_POLL_MS, left), options.signal);
    }
  } finally {
    unsubscribe?.();
  }
}

/**
 * Waits for a run to end: a worker's WaitRun for a child it started, and the local executor
 * for a child it queued.
 */
export async function waitForRunEnd(q: Queryable, dagName: string, dagRunId: string, options: RunWaitOptions = {}): Promise<RunWaitResult> {
  const end = await waitForRun(q, dagName, dagRunId, (run) => isTerminalRunStatus(run.status), options);
  if (end.state === 'missing') return end;
  if (end.state === 'pending') return { state: 'pending', status: end.run.status };
  const outputs = await getOutputs(q, end.run.id);
  // Stored outputs are the run's map of name to string value.
  return { state: 'finished', status: end.run.status, outputs: (outputs?.outputs ?? {}) as Record<string, string>, error: end.run.error };
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
