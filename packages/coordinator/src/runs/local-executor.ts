import { setMaxListeners } from 'node:events';
import { dirname } from 'node:path';
import { randomUUID } from 'node:crypto';
import { RunStatus, isTerminalRunStatus, resolveStartParams, selectDag, startSubRunRequest, type ResolvedParams, type StartSubRunRequest, toError } from '@trellis/core';
import { runDag, settlesWithin, type RunHandle, type SubRunHandle, type SubRunLauncher, type SubRunRequest, type SubRunResult } from '@trellis/engine';
import { getRun, markStarted, updateRunStatus, type Db, type RunRecord } from '@trellis/store';
import type { Logger } from '../logging/logger.js';
import { PersistingReporter } from './persisting-reporter.js';
import { dagLogRoot, runLogFile } from './log-paths.js';
import { executedInputs, insertSubRun } from './masked-params.js';
import type { SpecCache } from './spec-cache.js';
import type { RunObserver } from './run-observer.js';
import { waitForRunEnd } from './run-waiter.js';

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
 * Child runs that must go to a worker (a sub-DAG step whose worker_selector names labels) take
 * the path a worker's StartSubRun takes: RunService queues them, and stops them with their parent.
 */
export interface ChildRunQueue {
  enqueueChild(parent: RunRecord, request: StartSubRunRequest): Promise<RunRecord>;
  stop(run: RunRecord): Promise<void>;
}

export interface LocalExecutorDeps {
  db: Db;
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
  /** The YAML of a stored DAG by name (sub-DAG steps that call another file). */
  specOfDag: (name: string) => string | undefined;
  /** A run finished: its slot is free. */
  onFinished: () => void;
  /**
   * Where children bound for a worker are queued. Late-bound: RunService is built after this
   * executor (it needs it), and the getter is called only once runs exist.
   */
  childRuns: () => ChildRunQueue;
}

/**
 * The coordinator's own executor, worker `local`: it hosts the engine for admitted runs and
 * persists every report. Sub-DAG steps become child runs, recorded like any other run.
 */
export class LocalExecutor {
  private readonly handles = new Map<number, RunHandle>();
  private readonly finished = new Map<number, Promise<void>>();
  /** Aborted by drain(): waits for children on workers end, whatever the children do. */
  private readonly closing = new AbortController();

  constructor(private readonly deps: LocalExecutorDeps) {
    // Each child waiting on a worker listens for the shutdown while it sleeps: any number at once.
    setMaxListeners(0, this.closing.signal);
  }

  get running(): number {
    return this.handles.size;
  }

  has(runId: number): boolean {
    return this.handles.has(runId);
  }

  /** Starts an admitted run (status Running, worker local). */
  async start(run: RunRecord): Promise<void> {
    const yaml = await this.deps.specs.yaml(run.specHash);
    const picked = (await this.deps.specs.select(run.specHash, run.fileName || run.dagName, run.dagName)) ?? { localDags: [], error: 'the recorded definition is missing' };
    if (picked.dag === undefined) {
      await this.failBeforeStart(run, picked.error ?? 'no DAG to run');
      return;
    }
    const { paramsJson, runEnv, maskValues } = await executedInputs(this.deps.db, run);
    let params: ResolvedParams;
    try {
      params = JSON.parse(paramsJson) as ResolvedParams;
    } catch {
      await this.failBeforeStart(run, 'the recorded params are not valid JSON');
      return;
    }
    const reporter = new PersistingReporter(this.deps.db, run.id, this.deps.logger);
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
      env: runEnv,
      maskValues,
      launchSubRun: this.subRunLauncher(run, yaml ?? ''),
      streamLogs: false,
      docsDir: this.deps.docsDir,
      envPassthrough: this.deps.envPassthrough,
      envPassthroughPrefixes: this.deps.envPassthroughPrefixes,
    });
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
        this.deps.onFinished();
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
  }

  /** Stops every run now, with the reason as its error (a second signal cuts the shutdown grace short). */
  stopAll(reason: string): void {
    for (const handle of this.handles.values()) handle.stop(reason);
  }

  /** A stored DAG's file lies in the DAGs folder; an inline spec (no file name) has no folder. */
  private dagFileDir(run: RunRecord): { baseDir?: string } {
    return run.fileName !== '' ? { baseDir: this.deps.dagsDir } : {};
  }

  private async failBeforeStart(run: RunRecord, error: string): Promise<void> {
    this.deps.logger.error('run cannot start', { dagRunId: run.dagRunId, error });
    await updateRunStatus(this.deps.db, { runId: run.id, attemptId: run.attemptId, expected: [RunStatus.Running], next: RunStatus.Failed, finishedAt: new Date(), error });
    this.deps.onFinished();
  }

  /**
   * Sub-DAG steps: a step whose worker_selector names labels queues its child for a worker;
   * `worker_selector: local` and no selector run the child here, in this process.
   */
  private subRunLauncher(parent: RunRecord, parentYaml: string): SubRunLauncher {
    return (request: SubRunRequest): SubRunHandle => {
      if (request.workerSelector?.kind === 'labels') return this.queueChild(parent, parentYaml, request);
      let child: RunHandle | undefined;
      const done = this.startChild(parent, parentYaml, request, (h) => (child = h));
      return { done, stop: () => child?.stop() };
    };
  }

  /**
   * A child for a worker: queued through RunService as a worker's StartSubRun would queue it,
   * then waited for until it ends. Stopping the parent stops the child, wherever it is.
   */
  private queueChild(parent: RunRecord, parentYaml: string, request: SubRunRequest): SubRunHandle {
    let queued = false;
    let stopRequested = false;
    let stopping: Promise<void> | undefined;
    const stopChild = (): void => {
      stopping ??= this.stopQueuedChild(parent, request);
    };
    const done = (async (): Promise<SubRunResult> => {
      const parentRef = { dagName: parent.dagName, dagRunId: parent.dagRunId, attemptId: parent.attemptId };
      const parentSide = { workerId: this.deps.workerId, ref: parentRef, rootDagRunName: parent.rootDagRunName, rootDagRunId: parent.rootDagRunId, specYaml: parentYaml };
      await this.deps.childRuns().enqueueChild(parent, startSubRunRequest(parentSide, { ...request, fromParentFile: request.localDag !== undefined }));
      queued = true;
      if (stopRequested) stopChild();
      const end = await waitForRunEnd(this.deps.db, request.dagName, request.dagRunId, { signal: this.closing.signal });
      await stopping;
      if (end.state === 'missing') return { status: RunStatus.Failed, outputs: {}, error: `sub-DAG run ${request.dagName} ${request.dagRunId} is gone` };
      if (end.state === 'pending') return { status: RunStatus.Aborted, outputs: {}, error: `the coordinator stopped while sub-DAG run ${request.dagName} was on a worker` };
      return { status: end.status, outputs: end.outputs, ...(end.error !== '' ? { error: end.error } : {}) };
    })().catch((error: unknown) => ({ status: RunStatus.Failed, outputs: {}, error: `sub-DAG run ${request.dagName}: ${toError(error).message}` }));
    const stop = (): void => {
      stopRequested = true;
      if (queued) stopChild();
    };
    return { done, stop };
  }

  /** Stops a child this executor queued (as a worker's StopSubRun would); one that already ended is left alone. */
  private async stopQueuedChild(parent: RunRecord, request: SubRunRequest): Promise<void> {
    try {
      const child = await getRun(this.deps.db, request.dagName, request.dagRunId);
      if (child === undefined || isTerminalRunStatus(child.status)) return;
      await this.deps.childRuns().stop(child);
      this.deps.logger.info('sub-DAG run stopped with its parent', { dagName: child.dagName, dagRunId: child.dagRunId, parentDagRunId: parent.dagRunId });
    } catch (error) {
      // It may have ended in between (not running any more): nothing left to stop.
      this.deps.logger.warn('could not stop a sub-DAG run', { dagRunId: request.dagRunId, error: toError(error) });
    }
  }

  private async startChild(parent: RunRecord, parentYaml: string, request: SubRunRequest, onHandle: (h: RunHandle) => void) {
    const stored = request.localDag === undefined ? this.deps.specOfDag(request.dagName) : undefined;
    const yaml = request.localDag !== undefined ? parentYaml : stored;
    if (yaml === undefined) return { status: RunStatus.Failed, outputs: {}, error: `no DAG named ${request.dagName}` };
    const picked = selectDag(yaml, request.localDag !== undefined ? parent.fileName || parent.dagName : request.dagName, request.dagName);
    if (picked.dag === undefined) return { status: RunStatus.Failed, outputs: {}, error: picked.error ?? 'invalid sub-DAG' };
    const resolved = resolveStartParams(picked.dag.params, request.params === '' ? undefined : request.params);
    if (!resolved.ok) return { status: RunStatus.Failed, outputs: {}, error: resolved.errors.join('; ') };
    const existing = await getRun(this.deps.db, request.dagName, request.dagRunId);
    const attemptId = randomUUID();
    const record =
      existing ??
      (await insertSubRun(this.deps.db, {
        dagName: request.dagName,
        dagRunId: request.dagRunId,
        fileName: request.localDag !== undefined ? parent.fileName : request.dagName,
        rootDagRunName: parent.rootDagRunName,
        rootDagRunId: parent.rootDagRunId,
        parentDagRunName: parent.dagName,
        parentDagRunId: parent.dagRunId,
        attemptId,
        status: RunStatus.Running,
        queueName: `${parent.queueName}/sub`,
        logFile: runLogFile(dagLogRoot(this.deps.logDir, picked.dag), request.dagName, request.dagRunId, 1),
        specYaml: yaml,
        labels: picked.dag.labels,
        trigger: 'sub',
        noReuse: parent.noReuse,
        runEnv: request.env,
      }, resolved.params, request.maskValues));
    await markStarted(this.deps.db, record.id, this.deps.workerId);
    const reporter = new PersistingReporter(this.deps.db, record.id, this.deps.logger);
    const handle = runDag({
      dag: picked.dag,
      localDags: picked.localDags,
      params: resolved.params,
      identity: { dagName: record.dagName, dagRunId: record.dagRunId, attemptId: record.attemptId, rootDagRunName: record.rootDagRunName, rootDagRunId: record.rootDagRunId, parentDagRunName: record.parentDagRunName, parentDagRunId: record.parentDagRunId },
      logDir: dirname(record.logFile),
      ...this.dagFileDir(record),
      reporter,
      env: request.env,
      maskValues: request.maskValues,
      launchSubRun: this.subRunLauncher(record, yaml),
      streamLogs: false,
      docsDir: this.deps.docsDir,
      envPassthrough: this.deps.envPassthrough,
      envPassthroughPrefixes: this.deps.envPassthroughPrefixes,
    });
    onHandle(handle);
    this.handles.set(record.id, handle);
    try {
      const result = await handle.done;
      await reporter.settled();
      return { status: result.status, outputs: result.outputs.outputs, ...(result.snapshot.error !== '' ? { error: result.snapshot.error } : {}) };
    } finally {
      this.handles.delete(record.id);
    }
  }
}
