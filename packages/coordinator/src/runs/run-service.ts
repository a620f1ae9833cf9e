import { randomUUID } from 'node:crypto';
import { RunStatus, isActiveRunStatus, isTerminalRunStatus, resolveStartParams, selectDag, validateDagName, validateRunId, workspaceOfLabels, type Dag, AlreadyRunningError, BadRequestError, MaxRunReachedError, NotFoundError, NotRunningError, AlreadyRunningConflictError } from '@trellis/core';
import {
  countActiveRuns, dequeueRun, getRun, getSpecYaml, insertRun, notifyDispatch, requestRemoteStop, requeueForRetry,
  type Db, type DefinitionVersions, type NewEvent, type ProfileEntryMeta, type Queryable, type RunRecord,
} from '@trellis/store';
import type { StartSubRunRequest } from '@trellis/core';
import type { Dispatcher } from '../admission/dispatcher.js';
import type { LocalExecutor } from '../execution/local-executor.js';
import { dagLogRoot, runLogFile } from '../logs/log-paths.js';
import { executedInputs, insertMaskedRun, insertSubRun, type InputSealer } from './masked-params.js';
import type { QueuedCondition } from './payloads.js';
import { placementOf, subRunQueue, type ExecutionMode } from '../admission/placement.js';
import { queuedConditions, type ConditionDeps } from '../admission/conditions.js';
import type { Actor } from '../auth/principal.js';
import type { ProfileService } from '../profiles/profile-service.js';
import type { RunEnds } from './run-ends.js';

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
  /** Who starts it: recorded on the run as `triggeredBy`, and inherited by its sub-runs. */
  actor: Actor;
  /**
   * The runtime profile the run uses (default: the configured default profile, see `profileOf`;
   * the caller's right to use the one it gets is checked before): it must exist and be active,
   * else the start is refused; the run records its name and entry metadata.
   */
  profileName?: string;
  /**
   * A start nobody waits on (the scheduler's) is never refused for its profile: the run is
   * queued and fails as it starts, with the reason as its error.
   */
  profileCheckAtStart?: boolean;
  /** Refuse when the DAG has active runs: with this error. */
  singleton?: 'already_running' | 'max_run_reached';
  /** Run-level variables (a retry of a `parallel` sub-run keeps its ITEM); default none. */
  runEnv?: Record<string, string>;
  /** Secret values that params and runEnv carry (a new run of a sub-run that was handed its parent's secrets): recorded masked. */
  maskValues?: string[];
  /**
   * The profile counter as this start's read of its definition saw it: the run's entries are
   * recorded from memory kept at that value, without a statement (see ProfileService.resolve).
   */
  profilesAsOf?: number;
  /** Made from cached definitions: record the run only if they are still the newest stored (else StaleDefinitionsError). */
  expect?: DefinitionVersions;
  /** The audit event of this start, given the new run's names: recorded by the run's insert, so it costs no statement of its own. */
  audit?: (run: Pick<RunRecord, 'dagName' | 'dagRunId' | 'trigger'>) => NewEvent;
}

export interface RunServiceDeps {
  db: Db;
  dispatcher: Dispatcher;
  executor: LocalExecutor;
  logDir: string;
  globalQueues: Map<string, number>;
  defaultExecutionMode: ExecutionMode;
  conditions: ConditionDeps;
  /** This coordinator process, as its dispatch notifications name it. */
  instanceId: string;
  /** Other coordinators are alive on the database: only then is a NOTIFY worth its statement. */
  hasPeers: () => boolean;
  /** The YAML of a stored DAG by name (sub-DAG runs that workers start). */
  specOfDag: (name: string) => string | undefined;
  /** The runtime-profile entries (metadata) a new run records. */
  profiles: Pick<ProfileService, 'describe'>;
  /** Seals (and opens) the clear inputs of runs that carry secrets. */
  sealer: InputSealer;
  /** The profile of runs whose start names none (configuration `defaultProfile`). */
  defaultProfile: string | undefined;
  /** Told when a stop or dequeue here ends a run: a wait for it ends at once. */
  ends: RunEnds;
}

/** Starting, stopping, retrying and dequeuing runs: every run goes through the queue and admission. */
export class RunService {
  constructor(private readonly deps: RunServiceDeps) {}

  /**
   * Queues a run. Inside a caller's transaction (`tx`, the scheduler's tick) it writes there and
   * leaves waking the dispatchers to the caller, after commit.
   */
  async enqueue(request: StartRequest, tx?: Queryable): Promise<RunRecord> {
    const q = tx ?? this.deps.db;
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
    if (request.singleton !== undefined && (await countActiveRuns(q, dagName)) > 0) {
      if (request.singleton === 'already_running') throw new AlreadyRunningConflictError(`${dagName} is already running`, { dagName });
      throw new MaxRunReachedError(`${dagName} already has an active or queued run`, { dagName });
    }
    const profileName = this.profileOf(request.profileName);
    const profileEntries = await this.profileEntriesOf(request.dag, profileName, request.profileCheckAtStart === true, q, request.profilesAsOf);
    const newRun = {
      ...placementOf(request.dag.workerSelector, this.deps.defaultExecutionMode),
      dagName,
      dagRunId,
      fileName: request.fileName,
      attemptId: randomUUID(),
      status: RunStatus.Queued,
      queueName,
      logFile: runLogFile(dagLogRoot(this.deps.logDir, request.dag), dagName, dagRunId, 1),
      specYaml: request.yaml,
      labels: request.dag.labels,
      trigger: request.trigger,
      triggeredBy: request.actor,
      noReuse: request.noReuse ?? false,
      ...(profileName !== undefined ? { profileName } : {}),
      profileEntries,
      ...(request.runEnv !== undefined ? { runEnv: request.runEnv } : {}),
      ...(request.audit !== undefined ? { event: request.audit({ dagName, dagRunId, trigger: request.trigger }) } : {}),
      ...(request.expect !== undefined ? { expect: request.expect } : {}),
    };
    const maskValues = request.maskValues ?? [];
    const run =
      maskValues.length === 0
        ? await insertRun(q, { ...newRun, params: JSON.stringify(params.params) })
        : await (tx !== undefined ? insertMaskedRun(tx, this.deps.sealer, newRun, params.params, maskValues) : this.deps.db.transaction((t) => insertMaskedRun(t, this.deps.sealer, newRun, params.params, maskValues)));
    if (tx === undefined) await this.wakeDispatchers(run.dispatchTarget);
    return run;
  }

  /**
   * The profile of a new run whose start names `requested`: that one, else the configured
   * default (none when neither). Callers check the actor's right to use it before `enqueue`.
   */
  profileOf(requested: string | undefined): string | undefined {
    return requested ?? this.deps.defaultProfile;
  }

  async require(dagName: string, dagRunId: string): Promise<RunRecord> {
    const run = await getRun(this.deps.db, dagName, dagRunId);
    if (run === undefined) throw new NotFoundError('DAG run not found', { name: dagName, dagRunId });
    return run;
  }

  /**
   * Stops a running or waiting run; a queued one leaves the queue as Aborted. A remote run is
   * flagged: its worker's next heartbeat (within a second) carries the cancellation.
   */
  async stop(run: RunRecord): Promise<void> {
    if (run.status === RunStatus.Queued) {
      if (await dequeueRun(this.deps.db, run.id, 'stopped while queued')) {
        this.deps.ends.ended(run.dagName, run.dagRunId);
        return;
      }
    }
    if (!isActiveRunStatus(run.status)) throw new NotRunningError(`DAG run ${run.dagRunId} is not running`, { status: run.status });
    if (this.deps.executor.stop(run.id)) return;
    const remote = run.dispatchTarget === 'remote' ? await requestRemoteStop(this.deps.db, run.id, 'stopped before its worker started it') : 'not_running';
    if (remote !== 'not_running') {
      if (remote === 'aborted') this.deps.ends.ended(run.dagName, run.dagRunId);
      this.deps.dispatcher.wake();
      return;
    }
    throw new NotRunningError(`DAG run ${run.dagRunId} is not running on this coordinator`);
  }

  /**
   * A sub-DAG run a worker asks for (or the local executor, for a step whose worker_selector
   * names labels): queued like any run, placed by the step's selector or else where its parent
   * runs, with the variables its parent hands it (ITEM). The child id is deterministic, so a
   * resend returns the same child.
   */
  async enqueueChild(parent: RunRecord, request: StartSubRunRequest): Promise<RunRecord> {
    const existing = await getRun(this.deps.db, request.dagName, request.dagRunId);
    if (existing !== undefined) return existing;
    const yaml = request.specYaml !== '' ? request.specYaml : this.deps.specOfDag(request.dagName);
    if (yaml === undefined) throw new NotFoundError(`no DAG named ${request.dagName}`);
    const fileName = request.specYaml !== '' ? parent.fileName : request.dagName;
    const dag = this.dagOf(yaml, { dagName: request.dagName, fileName });
    const params = resolveStartParams(dag.params, request.paramsJson === '' ? undefined : request.paramsJson);
    if (!params.ok) throw new BadRequestError(`invalid params for ${request.dagName}: ${params.errors.join('; ')}`);
    const placement = request.runLocal
      ? placementOf({ kind: 'local' }, 'local')
      : Object.keys(request.workerSelector).length > 0
        ? placementOf({ kind: 'labels', labels: request.workerSelector }, 'distributed')
        : { dispatchTarget: parent.dispatchTarget, workerSelector: parent.workerSelector };
    const child = await insertSubRun(this.deps.db, this.deps.sealer, {
      ...placement,
      dagName: request.dagName,
      dagRunId: request.dagRunId,
      fileName,
      rootDagRunName: parent.rootDagRunName,
      rootDagRunId: parent.rootDagRunId,
      parentDagRunName: parent.dagName,
      parentDagRunId: parent.dagRunId,
      attemptId: randomUUID(),
      status: RunStatus.Queued,
      queueName: subRunQueue(parent.queueName),
      logFile: runLogFile(dagLogRoot(this.deps.logDir, dag), request.dagName, request.dagRunId, 1),
      specYaml: yaml,
      labels: dag.labels,
      trigger: 'sub',
      triggeredBy: parent.triggeredBy,
      noReuse: parent.noReuse,
      // Inherited, never chosen: the child resolves it (and its own workspace) as it starts.
      profileName: parent.profileName,
      runEnv: request.env,
    }, params.params, request.maskValues);
    await this.wakeDispatchers();
    return child;
  }

  async dequeue(run: RunRecord): Promise<void> {
    if (!(await dequeueRun(this.deps.db, run.id, 'dequeued'))) throw new NotFoundError('the run is not in a queue', { dagRunId: run.dagRunId });
    this.deps.ends.ended(run.dagName, run.dagRunId);
  }

  /**
   * Retry: a new attempt of the same run, or, with a different id, a new run of the same
   * definition and params. Either way the run is then `triggeredBy` the actor who retried it.
   */
  async retry(run: RunRecord, newRunId: string | undefined, actor: Actor): Promise<RunRecord> {
    if (!isTerminalRunStatus(run.status)) throw new AlreadyRunningError(`DAG run ${run.dagRunId} is still ${run.status === RunStatus.Queued ? 'queued' : 'running'}`);
    const yaml = await getSpecYaml(this.deps.db, run.specHash);
    if (yaml === undefined) throw new NotFoundError('the definition this run executed is no longer stored');
    if (newRunId !== undefined && newRunId !== run.dagRunId) {
      const dag = this.dagOf(yaml, run);
      const request: StartRequest = { yaml, fileName: run.fileName, dag, ...(await this.inputsOf(run)), dagRunId: newRunId, dagName: run.dagName, trigger: 'retry', actor };
      if (keepsQueue(run)) request.queue = run.queueName;
      return this.enqueue(request);
    }
    const logRoot = dagLogRoot(this.deps.logDir, this.dagOf(yaml, run));
    const attempt = { attemptId: randomUUID(), logFile: runLogFile(logRoot, run.dagName, run.dagRunId, run.attemptNumber + 1), triggeredBy: actor };
    const next = await this.deps.db.transaction((tx) => requeueForRetry(tx, run.id, attempt));
    if (next === undefined) throw new AlreadyRunningError(`DAG run ${run.dagRunId} is not finished`);
    await this.wakeDispatchers();
    return next;
  }

  /** A new queued run with the definition and params of `run`; always singleton-guarded. */
  async reschedule(run: RunRecord, newRunId: string | undefined, dagName: string | undefined, actor: Actor): Promise<RunRecord> {
    const yaml = await getSpecYaml(this.deps.db, run.specHash);
    if (yaml === undefined) throw new NotFoundError('the definition this run executed is no longer stored');
    const request: StartRequest = { yaml, fileName: run.fileName, dag: this.dagOf(yaml, run), ...(await this.inputsOf(run)), dagName: dagName ?? run.dagName, trigger: 'retry', actor, singleton: 'max_run_reached' };
    if (newRunId !== undefined) request.dagRunId = newRunId;
    if (keepsQueue(run)) request.queue = run.queueName;
    return this.enqueue(request);
  }

  /** Why a queued run waits, in the contract's condition form. */
  conditionsFor(run: RunRecord): Promise<QueuedCondition[]> {
    return queuedConditions(this.deps.conditions, run);
  }

  /**
   * This coordinator's dispatcher at once; the others on the database through NOTIFY. A run
   * known to wait for a worker wakes only the remote pollers: no local admission pass for it.
   */
  async wakeDispatchers(target?: RunRecord['dispatchTarget']): Promise<void> {
    this.deps.dispatcher.wake(target === 'remote' ? 'remote' : 'work');
    if (this.deps.db.capabilities.crossProcessNotify && this.deps.hasPeers()) await notifyDispatch(this.deps.db, this.deps.instanceId);
  }

  /**
   * The params, run-level variables, mask values and runtime profile a new run of `run` starts
   * with: the clear ones it executed with, not its masked record.
   */
  private async inputsOf(run: RunRecord): Promise<Pick<StartRequest, 'params' | 'runEnv' | 'maskValues' | 'profileName'>> {
    const inputs = await executedInputs(this.deps.db, this.deps.sealer, run);
    return { params: paramsObject(inputs.paramsJson), runEnv: inputs.runEnv, maskValues: inputs.maskValues, ...(run.profileName !== '' ? { profileName: run.profileName } : {}) };
  }

  /** The entries a new run would resolve now (refusing a missing or disabled profile), unless its check waits for its start. */
  private async profileEntriesOf(dag: Dag, profileName: string | undefined, checkAtStart: boolean, q: Queryable, asOf: number | undefined): Promise<ProfileEntryMeta[]> {
    const entries = this.deps.profiles.describe({ workspaceName: workspaceOfLabels(dag.labels), profileName }, q, asOf);
    return checkAtStart ? entries.catch(() => []) : entries;
  }

  private dagOf(yaml: string, run: Pick<RunRecord, 'dagName' | 'fileName'>): Dag {
    const picked = selectDag(yaml, run.fileName || run.dagName, run.dagName);
    if (picked.dag === undefined) throw new BadRequestError(picked.error ?? 'the recorded definition holds no DAG');
    return picked.dag;
  }

}

/**
 * Whether a new run of `run` waits in the same named queue. A sub-run's queue is its parent's
 * unlimited sub-queue, no configured queue: a new run of it has no parent and takes its DAG's.
 */
function keepsQueue(run: RunRecord): boolean {
  return run.queueName !== run.dagName && run.parentDagRunId === '';
}

/** Stored params ([{name, value}]) back into a start request's JSON object (named) or array (positional). */
function paramsObject(stored: string): string {
  const list = JSON.parse(stored) as Array<{ name: string; value: string }>;
  return JSON.stringify(list.map((p) => (/^\d+$/.test(p.name) ? p.value : `${p.name}=${p.value}`)));
}
