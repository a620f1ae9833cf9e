import { setMaxListeners } from 'node:events';
import { dirname } from 'node:path';
import { RunStatus, isTerminalRunStatus, startSubRunRequest, type ResolvedParams, type StartSubRunRequest, toError } from '@trellis/core';
import { ProcessSpawner, queuedSubRun, runDag, settlesWithin, sleep, type RunHandle, type SubRunHandle, type SubRunLauncher, type SubRunRequest, type SubRunResult } from '@trellis/engine';
import { getRun, isConnectionError, updateRunStatus, type Db, type RunRecord } from '@trellis/store';
import type { Logger } from '../logging/logger.js';
import { PersistingReporter } from './persisting-reporter.js';
import type { LogFollowers } from '../logs/log-followers.js';
import type { InputSealer } from '../runs/masked-params.js';
import type { SpecCache } from './spec-cache.js';
import type { RunObserver } from './run-observer.js';
import { waitForRunEnd } from '../runs/run-waiter.js';
import type { RunEnds } from '../runs/run-ends.js';
import { attemptInputs, UnstartableAttemptError, resolveAttemptProfile, type AttemptProfile, type ProfileResolver } from './attempt-profile.js';
import type { ExecutedInputs } from '../runs/masked-params.js';

/** A failed start's record is retried while the database cannot be reached: after about 200 ms, doubling up to 5 s, jittered so the runs that failed together do not retry together. */
const FAILED_START_RETRY_FIRST_MS = 200;
const FAILED_START_RETRY_MAX_MS = 5000;

/** An admitted run in the engine, and the reporter that persists what it reports. */
interface Launched {
  handle: RunHandle;
  reporter: PersistingReporter;
}

/**
 * The worker id of a coordinator's own executor: `local:<coordinator id>`. Each coordinator on
 * a shared database has its own, heartbeats under it like a worker, and at start-up fails only
 * the runs its previous process left behind.
 */
export function localWorkerId(coordinatorId: string): string {
  return `local:${coordinatorId}`;
}

export function isLocalWorkerId(workerId: string): boolean {
  return workerId.startsWith('local:');
}

/**
 * Child runs (sub-DAG steps) take the path a worker's StartSubRun takes: RunService queues them
 * for admission, and stops them with their parent.
 */
export interface ChildRunQueue {
  enqueueChild(parent: RunRecord, request: StartSubRunRequest): Promise<RunRecord>;
  stop(run: RunRecord): Promise<void>;
}

export interface LocalExecutorDeps {
  db: Db;
  /** Told when a run's log chunks are stored, so its followers read them at once. */
  logFollowers: Pick<LogFollowers, 'appended'>;
  logger: Logger;
  logDir: string;
  /** The folder of the DAG files: relative `dotenv`, `working_dir` and secret files of a stored DAG resolve against it. */
  dagsDir: string;
  docsDir: string;
  envPassthrough: string[];
  envPassthroughPrefixes: string[];
  specs: SpecCache;
  /** This executor's worker id (see localWorkerId). */
  workerId: string;
  observer: RunObserver;
  /** Told when a run this executor hosts is over and recorded: a wait for it (a parent's, a start-sync's) ends at once. */
  ends: RunEnds;
  /** The YAML of a stored DAG by name (sub-DAG steps that call another file). */
  specOfDag: (name: string) => string | undefined;
  /** Each attempt's runtime-profile values. */
  profiles: ProfileResolver;
  /** Opens the sealed inputs of runs that carry secrets. */
  sealer: InputSealer;
}

/**
 * The coordinator's own executor, worker `local`: it hosts the engine for admitted runs and
 * persists every report. Sub-DAG steps become child runs, recorded like any other run.
 */
export class LocalExecutor {
  private readonly handles = new Map<number, RunHandle>();
  private readonly finished = new Map<number, Promise<void>>();
  /** Aborted by drain() once the grace is over: waits for children end, whatever the children do, and reporters stop retrying failed writes. */
  private readonly closing = new AbortController();
  /** Told when a run is over and its queue slot free (the dispatcher subscribes). */
  private readonly slotListeners: Array<() => void> = [];
  /** Where sub-DAG children are queued: the run service, which is built after this executor (it stops local runs through it). */
  private childRuns: ChildRunQueue | undefined;
  /**
   * Starts step processes from a small helper process, as a worker does: a fork from this
   * process copies the page tables of the whole coordinator on its event loop, the largest
   * share of its CPU per 1-step run.
   */
  private readonly spawner: ProcessSpawner;

  constructor(private readonly deps: LocalExecutorDeps) {
    this.spawner = new ProcessSpawner({ onCrash: (message) => deps.logger.error(message) });
    // Each waiting child listens for the shutdown while it sleeps: any number at once.
    setMaxListeners(0, this.closing.signal);
  }

  /**
   * Completes the assembly: the run service that queues this executor's sub-DAG children. It
   * needs this executor, so it is attached once both exist, before the first run is admitted.
   */
  attachChildRuns(queue: ChildRunQueue): void {
    this.childRuns = queue;
  }

  /** `listener` is called each time a run ends here (its queue slot is free). */
  onSlotFreed(listener: () => void): void {
    this.slotListeners.push(listener);
  }

  get running(): number {
    return this.handles.size;
  }

  has(runId: number): boolean {
    return this.handles.has(runId);
  }

  /**
   * Starts an admitted run (status Running, worker local). A start that fails, for whatever
   * reason, fails the run: nothing else would, since this executor heartbeats as a worker and
   * the run would hold its queue slot until the next start-up of this coordinator.
   * `profilesVersion`: the profile counter as the run's admission saw it.
   */
  async start(run: RunRecord, profilesVersion?: number): Promise<void> {
    let launched: Launched | { refused: string };
    try {
      launched = await this.launch(run, profilesVersion);
    } catch (error) {
      launched = { refused: `the run could not start: ${toError(error).message}` };
    }
    if ('refused' in launched) {
      this.failBeforeStart(run, launched.refused);
      return;
    }
    const { handle, reporter } = launched;
    this.handles.set(run.id, handle);
    this.deps.logger.info('run started', { dagName: run.dagName, dagRunId: run.dagRunId, attemptId: run.attemptId, worker: this.deps.workerId });
    this.deps.observer.started(run);
    const done = handle.done
      .then(async (result) => {
        await reporter.settled();
        this.deps.logger.info('run finished', { dagName: run.dagName, dagRunId: run.dagRunId, status: result.snapshot.statusLabel });
        this.deps.observer.finished(run.dagName, result.status, run.startedAt);
      })
      .catch((error: unknown) => {
        this.deps.logger.error('run crashed in the engine', { dagRunId: run.dagRunId, error: toError(error) });
      })
      .finally(() => {
        this.handles.delete(run.id);
        this.finished.delete(run.id);
        this.runEnded(run);
      });
    this.finished.set(run.id, done);
  }

  stop(runId: number): boolean {
    const handle = this.handles.get(runId);
    handle?.stop();
    return handle !== undefined;
  }

  handle(runId: number): RunHandle | undefined {
    return this.handles.get(runId);
  }

  /**
   * Graceful shutdown, once nothing admits runs any more: running runs get `graceMs` to finish,
   * then the rest are stopped with a reason and waited for. Children on workers are waited for
   * within the grace; after it they are asked to stop with their parents, but not waited for:
   * their workers may not reach this coordinator any more.
   */
  async drain(graceMs: number): Promise<void> {
    const all = (): Promise<unknown> => Promise.all([...this.finished.values()]);
    if (this.handles.size > 0) this.deps.logger.info('waiting for local runs to finish', { running: this.finished.size, graceSec: graceMs / 1000 });
    if (!(await settlesWithin(all(), graceMs))) {
      this.deps.logger.warn('shutdown grace over: stopping local runs', { running: this.finished.size, graceSec: graceMs / 1000 });
      this.stopAll(`the coordinator shut down and the run did not finish within the shutdown grace (${graceMs / 1000}s)`);
    }
    this.closing.abort();
    await all();
    await this.spawner.close();
  }

  /** Stops every run now, with the reason as its error (a second signal cuts the shutdown grace short). */
  stopAll(reason: string): void {
    for (const handle of this.handles.values()) handle.stop(reason);
  }

  private freeSlot(): void {
    for (const listener of this.slotListeners) listener();
  }

  private children(): ChildRunQueue {
    if (this.childRuns === undefined) throw new Error('the local executor has no child run queue attached');
    return this.childRuns;
  }

  /** A stored DAG's file lies in the DAGs folder; an inline spec (no file name) has no folder. */
  private dagFileDir(run: RunRecord): { baseDir?: string } {
    return run.fileName !== '' ? { baseDir: this.deps.dagsDir } : {};
  }

  /** The engine running the run, or why it cannot start; throws what it did not expect. */
  private async launch(run: RunRecord, profilesVersion?: number): Promise<Launched | { refused: string }> {
    const yaml = await this.deps.specs.yaml(run.specHash);
    const picked = (await this.deps.specs.select(run.specHash, run.fileName || run.dagName, run.dagName)) ?? { localDags: [], error: 'the recorded definition is missing' };
    if (picked.dag === undefined) return { refused: picked.error ?? 'no DAG to run' };
    let inputs: ExecutedInputs;
    let profile: AttemptProfile;
    try {
      inputs = await attemptInputs(this.deps.db, this.deps.sealer, run);
      profile = await resolveAttemptProfile(this.deps.db, this.deps.profiles, run, profilesVersion);
    } catch (error) {
      if (!(error instanceof UnstartableAttemptError)) throw error;
      return { refused: error.message };
    }
    const { paramsJson, runEnv, maskValues } = inputs;
    let params: ResolvedParams;
    try {
      params = JSON.parse(paramsJson) as ResolvedParams;
    } catch {
      return { refused: 'the recorded params are not valid JSON' };
    }
    const reporter = new PersistingReporter(this.deps.db, run, this.deps.logger, this.deps.logFollowers, this.closing.signal);
    const handle = runDag({
      dag: picked.dag,
      localDags: picked.localDags,
      params,
      identity: {
        dagName: run.dagName,
        dagRunId: run.dagRunId,
        attemptId: run.attemptId,
        rootDagRunName: run.rootDagRunName,
        rootDagRunId: run.rootDagRunId,
        parentDagRunName: run.parentDagRunName,
        parentDagRunId: run.parentDagRunId,
      },
      logDir: dirname(run.logFile),
      ...this.dagFileDir(run),
      reporter,
      // The run's own variables (ITEM, WEBHOOK_PAYLOAD) over the profile's.
      env: { ...profile.env, ...runEnv },
      secrets: profile.secrets,
      maskValues,
      launchSubRun: this.subRunLauncher(run, yaml ?? ''),
      docsDir: this.deps.docsDir,
      envPassthrough: this.deps.envPassthrough,
      envPassthroughPrefixes: this.deps.envPassthroughPrefixes,
      launcher: this.spawner.launch,
    });
    return { handle, reporter };
  }

  /** A run is over and recorded: a parent waiting for it wakes, and its queue slot is free. */
  private runEnded(run: RunRecord): void {
    this.deps.ends.ended(run.dagName, run.dagRunId);
    this.freeSlot();
  }

  /**
   * Fails a run that could not start. The write is tracked like a running run, so drain()
   * waits for it within the grace and then cuts its retries short.
   */
  private failBeforeStart(run: RunRecord, error: string): void {
    this.deps.logger.error('run cannot start', { dagRunId: run.dagRunId, error });
    const recorded = this.recordFailedStart(run, error).then((stored) => {
      this.finished.delete(run.id);
      if (stored) this.runEnded(run);
    });
    this.finished.set(run.id, recorded);
  }

  /**
   * True once the run is recorded as Failed (or had left Running meanwhile). While the database
   * cannot be reached the write is retried with backoff, until the shutdown signal: a run left
   * Running then is failed by this coordinator's next start-up, as an interrupted run.
   */
  private async recordFailedStart(run: RunRecord, error: string): Promise<boolean> {
    const leftRunning = (why: string, cause?: unknown): false => {
      this.deps.logger.error(`could not record that a run failed to start (${why}): it stays Running until the next start-up of this coordinator fails it`, { dagRunId: run.dagRunId, ...(cause !== undefined ? { error: toError(cause) } : {}) });
      return false;
    };
    let delay = FAILED_START_RETRY_FIRST_MS;
    for (let attempt = 1; ; attempt += 1) {
      try {
        await updateRunStatus(this.deps.db, { runId: run.id, attemptId: run.attemptId, expected: [RunStatus.Running], next: RunStatus.Failed, finishedAt: new Date(), error });
        this.deps.logger.info('a run that could not start is recorded as failed', { dagRunId: run.dagRunId, attempts: attempt });
        return true;
      } catch (cause) {
        if (!isConnectionError(cause)) return leftRunning('the database refused the write', cause);
        this.deps.logger.debug('the database cannot be reached to record a failed start; retrying', { dagRunId: run.dagRunId, attempt, error: toError(cause) });
      }
      await sleep(delay * (0.5 + Math.random()), this.closing.signal);
      if (this.closing.signal.aborted) return leftRunning('the coordinator shut down while the database could not be reached');
      delay = Math.min(delay * 2, FAILED_START_RETRY_MAX_MS);
    }
  }

  /**
   * Sub-DAG steps: every child is queued through RunService as a worker's StartSubRun would
   * queue it, so admission (queue limits, conditions, placement by the step's worker_selector,
   * else where the parent runs) applies to it as to any run; the parent waits until it ends.
   * Stopping the parent stops the child, wherever it is.
   */
  private subRunLauncher(parent: RunRecord, parentYaml: string): SubRunLauncher {
    const parentRef = { dagName: parent.dagName, dagRunId: parent.dagRunId, attemptId: parent.attemptId };
    const parentSide = { workerId: this.deps.workerId, ref: parentRef, rootDagRunName: parent.rootDagRunName, rootDagRunId: parent.rootDagRunId, specYaml: parentYaml };
    return (request: SubRunRequest): SubRunHandle =>
      queuedSubRun(request, {
        enqueue: async () => {
          await this.children().enqueueChild(parent, startSubRunRequest(parentSide, { ...request, fromParentFile: request.localDag !== undefined }));
        },
        waitForEnd: () => this.waitForChild(request),
        stop: () => this.stopQueuedChild(parent, request),
      });
  }

  /** A child that ends through this coordinator wakes the wait as it ends (see RunEnds); any other is seen by polling. */
  private async waitForChild(request: SubRunRequest): Promise<SubRunResult> {
    const wakeOn = this.deps.ends.wakeOn(request.dagName, request.dagRunId);
    const end = await waitForRunEnd(this.deps.db, request.dagName, request.dagRunId, { signal: this.closing.signal, wakeOn });
    if (end.state === 'missing') return { status: RunStatus.Failed, outputs: {}, error: `sub-DAG run ${request.dagName} ${request.dagRunId} is gone` };
    if (end.state === 'pending') return { status: RunStatus.Aborted, outputs: {}, error: `the coordinator stopped while sub-DAG run ${request.dagName} was not finished` };
    return { status: end.status, outputs: end.outputs, ...(end.error !== '' ? { error: end.error } : {}) };
  }

  /** Stops a child this executor queued (as a worker's StopSubRun would); one that already ended is left alone. */
  private async stopQueuedChild(parent: RunRecord, request: SubRunRequest): Promise<void> {
    try {
      const child = await getRun(this.deps.db, request.dagName, request.dagRunId);
      if (child === undefined || isTerminalRunStatus(child.status)) return;
      await this.children().stop(child);
      this.deps.logger.info('sub-DAG run stopped with its parent', { dagName: child.dagName, dagRunId: child.dagRunId, parentDagRunId: parent.dagRunId });
    } catch (error) {
      // It may have ended in between (not running any more): nothing left to stop.
      this.deps.logger.warn('could not stop a sub-DAG run', { dagRunId: request.dagRunId, error: toError(error) });
    }
  }
}
