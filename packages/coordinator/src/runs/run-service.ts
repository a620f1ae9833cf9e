import { randomUUID } from 'node:crypto';
import { RunStatus, isActiveRunStatus, isTerminalRunStatus, loadDag, resolveStartParams, validateDagName, validateRunId, type Dag } from '@trellis/core';
import {
  countActiveRuns, dequeueRun, getRun, getSpecYaml, insertRun, queueCounts, requeueForRetry, RunExistsError,
  type Db, type RunRecord,
} from '@trellis/store';
import { AlreadyExistsError, AlreadyRunningError, BadRequestError, MaxRunReachedError, NotFoundError, NotRunningError, AlreadyRunningConflictError } from '../errors/api-errors.js';
import type { Dispatcher } from './dispatcher.js';
import type { LocalExecutor } from './local-executor.js';
import { runLogFile } from './log-paths.js';
import type { QueuedCondition } from './payloads.js';

export interface StartRequest {
  /** The definition text and the file it came from ('' for inline specs). */
  yaml: string;
  fileName: string;
  dag: Dag;
  params?: string;
  dagRunId?: string;
  dagName?: string;
  queue?: string;
  noReuse?: boolean;
  trigger: string;
  /** Refuse when the DAG has active runs: with this error. */
  singleton?: 'already_running' | 'max_run_reached';
}

export interface RunServiceDeps {
  db: Db;
  dispatcher: Dispatcher;
  executor: LocalExecutor;
  logDir: string;
  globalQueues: Map<string, number>;
  dagQueueLimit: (queueName: string) => number;
}

/** Starting, stopping, retrying and dequeuing runs: every run goes through the queue and admission. */
export class RunService {
  constructor(private readonly deps: RunServiceDeps) {}

  async enqueue(request: StartRequest): Promise<RunRecord> {
    const params = resolveStartParams(request.dag.params, request.params);
    if (!params.ok) throw new BadRequestError(`invalid params: ${params.errors.join('; ')}`, { errors: params.errors });
    const dagName = request.dagName ?? request.dag.name;
    const nameProblem = validateDagName(dagName);
    if (nameProblem !== undefined) throw new BadRequestError(`dagName ${nameProblem}`, { dagName });
    const dagRunId = request.dagRunId ?? randomUUID();
    const idProblem = validateRunId(dagRunId);
    if (idProblem !== undefined) throw new BadRequestError(`dagRunId ${idProblem}`, { dagRunId });
    const queueName = request.queue ?? request.dag.queue ?? dagName;
    if ((request.queue !== undefined || request.dag.queue !== undefined) && !this.deps.globalQueues.has(queueName)) {
      throw new BadRequestError(`unknown queue "${queueName}" (configured: ${[...this.deps.globalQueues.keys()].join(', ') || 'none'})`);
    }
    if (request.singleton !== undefined && (await countActiveRuns(this.deps.db, dagName)) > 0) {
      if (request.singleton === 'already_running') throw new AlreadyRunningConflictError(`${dagName} is already running`, { dagName });
      throw new MaxRunReachedError(`${dagName} already has an active or queued run`, { dagName });
    }
    try {
      const run = await insertRun(this.deps.db, {
        dagName,
        dagRunId,
        fileName: request.fileName,
        attemptId: randomUUID(),
        status: RunStatus.Queued,
        params: JSON.stringify(params.params),
        queueName,
        logFile: runLogFile(this.deps.logDir, dagName, dagRunId, 1),
        specYaml: request.yaml,
        labels: request.dag.labels,
        trigger: request.trigger,
        noReuse: request.noReuse ?? false,
      });
      this.deps.dispatcher.wake();
      return run;
    } catch (error) {
      if (error instanceof RunExistsError) throw new AlreadyExistsError(`DAG run ${dagRunId} already exists`, { dagRunId });
      throw error;
    }
  }

  async require(dagName: string, dagRunId: string): Promise<RunRecord> {
    const run = await getRun(this.deps.db, dagName, dagRunId);
    if (run === undefined) throw new NotFoundError('DAG run not found', { name: dagName, dagRunId });
    return run;
  }

  /** Stops a running or waiting run; a queued one leaves the queue as Aborted. */
  async stop(run: RunRecord): Promise<void> {
    if (run.status === RunStatus.Queued) {
      if (await dequeueRun(this.deps.db, run.id, 'stopped while queued')) return;
    }
    if (!isActiveRunStatus(run.status)) throw new NotRunningError(`DAG run ${run.dagRunId} is not running`, { status: run.status });
    if (!this.deps.executor.stop(run.id)) throw new NotRunningError(`DAG run ${run.dagRunId} is not running on this coordinator`);
  }

  async dequeue(run: RunRecord): Promise<void> {
    if (!(await dequeueRun(this.deps.db, run.id, 'dequeued'))) throw new NotFoundError('the run is not in a queue', { dagRunId: run.dagRunId });
  }

  /** Retry: a new attempt of the same run, or, with a different id, a new run of the same definition and params. */
  async retry(run: RunRecord, newRunId: string | undefined): Promise<RunRecord> {
    if (!isTerminalRunStatus(run.status)) throw new AlreadyRunningError(`DAG run ${run.dagRunId} is still ${run.status === RunStatus.Queued ? 'queued' : 'running'}`);
    const yaml = await getSpecYaml(this.deps.db, run.specHash);
    if (yaml === undefined) throw new NotFoundError('the definition this run executed is no longer stored');
    if (newRunId !== undefined && newRunId !== run.dagRunId) {
      const dag = this.dagOf(yaml, run);
      const request: StartRequest = { yaml, fileName: run.fileName, dag, params: paramsObject(run.params), dagRunId: newRunId, dagName: run.dagName, trigger: 'retry' };
      if (run.queueName !== run.dagName) request.queue = run.queueName;
      return this.enqueue(request);
    }
    const next = await this.deps.db.transaction((tx) => requeueForRetry(tx, run.id, randomUUID(), runLogFile(this.deps.logDir, run.dagName, run.dagRunId, run.attemptNumber + 1)));
    if (next === undefined) throw new AlreadyRunningError(`DAG run ${run.dagRunId} is not finished`);
    this.deps.dispatcher.wake();
    return next;
  }

  /** A new queued run with the definition and params of `run`; always singleton-guarded. */
  async reschedule(run: RunRecord, newRunId: string | undefined, dagName: string | undefined): Promise<RunRecord> {
    const yaml = await getSpecYaml(this.deps.db, run.specHash);
    if (yaml === undefined) throw new NotFoundError('the definition this run executed is no longer stored');
    const request: StartRequest = { yaml, fileName: run.fileName, dag: this.dagOf(yaml, run), params: paramsObject(run.params), dagName: dagName ?? run.dagName, trigger: 'retry', singleton: 'max_run_reached' };
    if (newRunId !== undefined) request.dagRunId = newRunId;
    if (run.queueName !== run.dagName) request.queue = run.queueName;
    return this.enqueue(request);
  }

  /** Why a queued run waits, in the contract's condition form. */
  async conditionsFor(run: RunRecord): Promise<QueuedCondition[]> {
    if (run.status !== RunStatus.Queued) return [];
    const counts = (await queueCounts(this.deps.db)).get(run.queueName) ?? { queued: 0, running: 0 };
    const limit = this.deps.globalQueues.get(run.queueName) ?? this.deps.dagQueueLimit(run.queueName);
    const full = counts.running >= limit;
    return [
      {
        type: 'Queued',
        status: 'True',
        reason: full ? 'QueueConcurrencyLimitReached' : 'DispatchAdmissionPending',
        message: full ? `queue ${run.queueName} has no free slot (${counts.running} of ${limit} running)` : `waiting for admission to queue ${run.queueName}`,
        checkedAt: new Date().toISOString(),
      },
    ];
  }

  private dagOf(yaml: string, run: RunRecord): Dag {
    const loaded = loadDag(yaml, { fileName: run.fileName || run.dagName });
    const dag = loaded.dag?.name === run.dagName || run.fileName === run.dagName ? loaded.dag : (loaded.localDags.find((l) => l.name === run.dagName)?.dag ?? loaded.dag);
    if (dag === undefined) throw new BadRequestError(`the recorded definition is invalid: ${loaded.errors.join('; ')}`);
    return dag;
  }
}

/** Stored params ([{name, value}]) back into a start request's JSON object (named) or array (positional). */
function paramsObject(stored: string): string {
  const list = JSON.parse(stored) as Array<{ name: string; value: string }>;
  return JSON.stringify(list.map((p) => (/^\d+$/.test(p.name) ? p.value : `${p.name}=${p.value}`)));
}
