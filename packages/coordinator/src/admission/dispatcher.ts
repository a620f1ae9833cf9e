import { admitQueuedRuns, type Db, type RunRecord } from '@trellis/store';
import { toError } from '@trellis/core';
import type { Logger } from '../logging/logger.js';
import type { LocalExecutor } from '../execution/local-executor.js';
import { SerialPass } from './serial-pass.js';
import { DEFAULT_QUEUE_LIMIT, type QueueLimits } from './placement.js';

/** The safety net: admission also runs this often even if nothing woke it. */
const SWEEP_MS = 2000;
const BATCH = 32;
/**
 * While local runs wait for a queue slot, how long after the last admission pass's answer (or
 * after now, while a pass still waits for its answer) a wake's pass may begin: the wakes that
 * arrive sooner wait for the end of that time, together, in one pass. Runs then end, and new
 * ones queue, one after another: a pass per wake cost a PGlite coordinator 1.1 admission
 * statements per run (1.3 ms each, most finding every slot taken) with 16 slots full and more
 * runs queued. Counted from the last pass rather than from the wake, a wake that comes later
 * than this admits at once: a queue of one slot runs its backlog without a pause before each run
 * (one-step runs on PostgreSQL: 144-150 runs/s, against 91-102 when every wake waited 5 ms). A
 * pass that filled a whole batch still asks for the next at once. The backlog is not told apart
 * by queue (the admission answers only whether any local run is left), so while one queue is
 * full a run queued on another with free slots may also start up to this much later: small
 * beside what starting a process costs.
 */
const BACKLOG_PASS_SPACING_MS = 5;

export interface DispatcherDeps {
  db: Db;
  executor: LocalExecutor;
  /** The local executor's worker id. */
  workerId: string;
  logger: Logger;
  /** Slots per queue. */
  limits: QueueLimits;
  /** Remote pollers waiting for work are woken with the local executor; `queued` says a remote run was just queued. */
  remote?: { wake(queued?: boolean): void };
  /** Default BACKLOG_PASS_SPACING_MS; tests widen it so that their wakes fall inside it on a slow machine. */
  backlogPassSpacingMs?: number;
}

/**
 * Hands queued local runs to the local executor, and wakes the remote pollers. Every start,
 * enqueue and finished run wakes it; wakes that arrive while it admits are folded into one more
 * pass, so it never admits twice at once, and while runs wait for a slot, a wake's pass waits
 * until BACKLOG_PASS_SPACING_MS have passed since the last one.
 */
export class Dispatcher {
  private readonly passes = new SerialPass(() => this.admitLocal());
  private timer: NodeJS.Timeout | undefined;
  private gatherTimer: NodeJS.Timeout | undefined;
  /** When the last admission pass had its answer, or failed (performance.now()). */
  private lastPassEnded = Number.NEGATIVE_INFINITY;
  /** An admission pass has sent its statement and waits for the answer. */
  private awaitingAnswer = false;
  /** The last admission left local runs queued (their queue was full, or past the batch). */
  private backlog = false;
  private stopped = false;
  /** The last admission found no local run queued besides those it admitted, and nothing has queued one since. */
  private noLocalQueued = false;
  /** `work` wakes so far: an admission's answer about queued runs stands only if none came while it ran. */
  private workWakes = 0;

  constructor(private readonly deps: DispatcherDeps) {
    // A run that ends frees a slot: local runs waiting for it may be admitted.
    deps.executor.onSlotFreed(() => this.wake('slot'));
  }

  start(): void {
    this.timer = setInterval(() => this.wake('work'), SWEEP_MS);
    this.timer.unref();
    this.wake();
  }

  /**
   * `work`: runs may have been queued (here, by another coordinator, or by a requeue). `slot`:
   * a run finished and freed a queue slot; that matters to local admission only if local runs
   * are waiting, so a busy remote fleet does not cost a local admission pass per finished run.
   * `remote`: a run for a worker was queued here; only the remote pollers need to look.
   */
  wake(reason: 'work' | 'slot' | 'remote' = 'work'): void {
    if (this.stopped) return;
    this.deps.remote?.wake(reason === 'remote');
    if (reason === 'remote') return;
    if (reason === 'work') {
      this.noLocalQueued = false;
      this.workWakes += 1;
    } else if (this.noLocalQueued) return;
    if (this.backlog) this.gather();
    else this.passes.request();
  }

  /** A pass now if the last one was answered long enough ago, else one pass for every wake until then. */
  private gather(): void {
    if (this.gatherTimer !== undefined) return;
    const spacing = this.deps.backlogPassSpacingMs ?? BACKLOG_PASS_SPACING_MS;
    // A pass waiting for its answer will be answered later than now: the spacing starts now at the earliest.
    const wait = this.awaitingAnswer ? spacing : this.lastPassEnded + spacing - performance.now();
    if (wait <= 0) {
      this.passes.request();
      return;
    }
    this.gatherTimer = setTimeout(() => {
      this.gatherTimer = undefined;
      this.passes.request();
    }, wait);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    clearTimeout(this.gatherTimer);
    await this.passes.stop();
  }

  /** One local admission; true when it filled a whole batch (more may be waiting). */
  private async admitLocal(): Promise<boolean> {
    try {
      const wakesBefore = this.workWakes;
      const { runs, profilesVersion, moreQueued } = await this.admitQueued();
      // Only while local runs wait (for a slot) do freed slots need an admission pass. The answer
      // is as of the statement's start: a run queued since woke the dispatcher, and that wake's
      // reset of the flag stands until the pass it asked for looks again.
      if (this.workWakes === wakesBefore) this.noLocalQueued = !moreQueued;
      this.backlog = moreQueued;
      await this.startSideBySide(runs, profilesVersion);
      return runs.length === BATCH;
    } catch (error) {
      this.deps.logger.error('admission failed; retrying on the next sweep', { error: toError(error) });
      return false;
    }
  }

  /** The admission statement, timed for the spacing of the passes after it (a failed one too: an outage is not retried per wake). */
  private async admitQueued(): ReturnType<typeof admitQueuedRuns> {
    this.awaitingAnswer = true;
    try {
      return await admitQueuedRuns(this.deps.db, { limits: this.deps.limits.explicit(), defaultLimit: DEFAULT_QUEUE_LIMIT, workerId: this.deps.workerId, target: { kind: 'local' }, batch: BATCH });
    } finally {
      this.awaitingAnswer = false;
      this.lastPassEnded = performance.now();
    }
  }

  /**
   * Each start reads the run's inputs and profile; a run must not wait for the reads of the runs
   * before it. The pass ends only when every start has (stop() waits for it, and the executor's
   * drain then sees every run): one that fails does not cut the wait for the others short.
   */
  private async startSideBySide(admitted: RunRecord[], profilesVersion: number): Promise<void> {
    const results = await Promise.allSettled(admitted.map((run) => this.deps.executor.start(run, profilesVersion)));
    results.forEach((result, i) => {
      if (result.status === 'rejected') this.deps.logger.error('an admitted run could not start', { dagRunId: admitted[i]?.dagRunId, error: toError(result.reason) });
    });
  }
}
