import {
  RunStatus, isTerminalRunStatus, isValidInlineRunName, loadDag, nodeStatusLabel, type Dag, type NodeStatus,
  AlreadyExistsError, AlreadyRunningConflictError, BadRequestError, ForbiddenError, MaxRunReachedError, NotFoundError, TimeoutError,
} from '@trellis/core';
import { queueRunCommand, setNodeData, StaleDefinitionsError, type Db, type DefinitionVersions, type RunRecord } from '@trellis/store';
import type { DagIndex } from '../definitions/dag-index.js';
import type { LocalExecutor } from '../execution/local-executor.js';
import type { RunQueries } from './run-queries.js';
import type { RunService, StartRequest } from './run-service.js';
import { waitForRun } from './run-waiter.js';
import type { RunEnds } from './run-ends.js';
import { auditRun, runAuditEvent } from './run-audit.js';
import type { Actor, Principal } from '../auth/principal.js';
import type { ProfileService } from '../profiles/profile-service.js';

export interface RunCommandsDeps {
  db: Db;
  index: DagIndex;
  runs: RunService;
  queries: RunQueries;
  executor: LocalExecutor;
  ends: RunEnds;
  /** Whether a caller may start runs with a runtime profile. */
  profiles: Pick<ProfileService, 'mayUse'>;
}

/** What a caller may choose about a new run; `singleton` refuses it while the DAG has active runs. */
export interface StartOptions {
  params?: string | undefined;
  dagRunId?: string | undefined;
  dagName?: string | undefined;
  noReuse?: boolean | undefined;
  queue?: string | undefined;
  singleton?: boolean | undefined;
  /** The runtime profile to run with: the caller must be allowed to use it, and it must be active. */
  profileName?: string | undefined;
}

/** An approval step's decision: approve (with its inputs) or reject (with a reason). */
export interface ApprovalDecision {
  action: 'approve' | 'reject';
  inputs: Record<string, string>;
  reason: string;
}

/** A start's audit record: `start` (run now, or as soon as admitted) or `enqueue` (the enqueue endpoints). */
export type StartAction = 'start' | 'enqueue';

/**
 * Starting and changing runs on a caller's request (the REST API's run commands). Each names
 * its actor: recorded on new runs as `triggeredBy`, and in the audit trail for every action.
 */
export class RunCommands {
  constructor(private readonly deps: RunCommandsDeps) {}

  /** Queues a run of a stored DAG; a singleton start is refused with `already_running` while the DAG is active. */
  async startStored(actor: Principal, fileName: string, options: StartOptions, action: StartAction = 'start'): Promise<RunRecord> {
    const cached = this.deps.index.startable(fileName);
    if (cached !== undefined) {
      try {
        return await this.started(actor, action, startRequest(cached, fileName, options, 'manual', actor, 'already_running', cached.expect));
      } catch (error) {
        if (!mayBeStale(error)) throw error;
      }
    }
    return this.started(actor, action, startRequest(await this.storedDag(fileName), fileName, options, 'manual', actor, 'already_running'));
  }

  /** Queues a run of an inline spec, never stored as a definition; a singleton start is refused with `max_run_reached`. */
  startInline(actor: Principal, spec: string, name: string | undefined, options: StartOptions, action: StartAction = 'start'): Promise<RunRecord> {
    const request = startRequest(inlineDag(spec, name), '', { ...options, dagName: options.dagName ?? name }, 'api', actor, 'max_run_reached');
    return this.started(actor, action, request);
  }

  /**
   * Starts a stored DAG and waits until the run ends or waits for approval: its details, or a
   * timeout carrying its id when `timeoutSec` passes first (the run continues).
   */
  async startSync(actor: Principal, fileName: string, options: StartOptions, timeoutSec: number) {
    const started = await this.startStored(actor, fileName, options);
    const settled = (run: RunRecord) => isTerminalRunStatus(run.status) || run.status === RunStatus.Waiting;
    // Woken as the run ends through this coordinator; Waiting, and ends elsewhere, are seen by the poll.
    const wakeOn = this.deps.ends.wakeOn(started.dagName, started.dagRunId);
    const end = await waitForRun(this.deps.db, started.dagName, started.dagRunId, settled, { waitMs: timeoutSec * 1000, wakeOn });
    if (end.state === 'missing') throw new NotFoundError('DAG run not found', { name: started.dagName, dagRunId: started.dagRunId });
    if (end.state === 'pending') throw new TimeoutError(`the run did not finish within ${timeoutSec}s; it continues`, started.dagRunId);
    return this.deps.queries.detailsOf(end.run);
  }

  async stop(actor: Actor, name: string, dagRunId: string): Promise<void> {
    const run = await this.deps.runs.require(name, dagRunId);
    await this.deps.runs.stop(run);
    await auditRun(this.deps.db, actor, 'run.stopped', run);
  }

  /**
   * A new attempt (the run is then `triggeredBy` the actor), or a new run when `newRunId`
   * differs; either keeps the run's profile, which the actor must be allowed to use.
   */
  async retry(actor: Principal, name: string, dagRunId: string, newRunId: string | undefined): Promise<RunRecord> {
    const run = await this.deps.runs.require(name, dagRunId);
    await this.mayUseProfile(actor, run.profileName);
    const retried = await this.deps.runs.retry(run, newRunId, actor);
    await auditRun(this.deps.db, actor, 'run.retried', retried, retried.dagRunId !== dagRunId ? { retryOf: dagRunId } : { attempt: retried.attemptNumber });
    return retried;
  }

  async reschedule(actor: Principal, name: string, dagRunId: string, newRunId: string | undefined, dagName: string | undefined): Promise<RunRecord> {
    const original = await this.deps.runs.require(name, dagRunId);
    await this.mayUseProfile(actor, original.profileName);
    const run = await this.deps.runs.reschedule(original, newRunId, dagName, actor);
    await auditRun(this.deps.db, actor, 'run.rescheduled', run, { rescheduleOf: { dagName: name, dagRunId } });
    return run;
  }

  async dequeue(actor: Actor, name: string, dagRunId: string): Promise<void> {
    const run = await this.deps.runs.require(name, dagRunId);
    await this.deps.runs.dequeue(run);
    await auditRun(this.deps.db, actor, 'run.dequeued', run);
  }

  /** Approves or rejects a step waiting for approval (see `deliver`), and records who did. */
  async decide(actor: Actor, name: string, dagRunId: string, stepName: string, decision: ApprovalDecision): Promise<void> {
    const run = await this.deps.queries.resolve(name, dagRunId);
    await this.deliver(run, stepName, decision);
    // The names of the inputs only: their values are the approver's to give, not the trail's to keep.
    const data = decision.action === 'approve' ? { stepName, inputs: Object.keys(decision.inputs) } : { stepName, reason: decision.reason };
    await auditRun(this.deps.db, actor, decision.action === 'approve' ? 'run.step.approved' : 'run.step.rejected', run, data);
  }

  /** Sets a step's status by hand on a run that is not running (`latest` allowed). */
  async setStepStatus(actor: Actor, name: string, dagRunId: string, stepName: string, status: number): Promise<void> {
    await this.setStatusOf(actor, await this.deps.queries.resolve(name, dagRunId), stepName, status);
  }

  /** Sets a step's status by hand on a sub-DAG run of the run `name`/`dagRunId`. */
  async setSubRunStepStatus(actor: Actor, name: string, dagRunId: string, subDagRunId: string, stepName: string, status: number): Promise<void> {
    await this.setStatusOf(actor, await this.deps.queries.subRun(name, dagRunId, subDagRunId), stepName, status);
  }

  /** The profile checked is the one the run gets: the one named, or else the configured default. */
  private async started(actor: Principal, action: StartAction, request: StartRequest): Promise<RunRecord> {
    const profileName = this.deps.runs.profileOf(request.profileName);
    if (profileName !== undefined) await this.deps.profiles.mayUse(actor, profileName, { named: request.profileName !== undefined });
    return this.deps.runs.enqueue({ ...request, audit: (run) => runAuditEvent(actor, action === 'start' ? 'run.started' : 'run.enqueued', run, { trigger: run.trigger }) });
  }

  private async mayUseProfile(actor: Principal, profileName: string): Promise<void> {
    if (profileName !== '') await this.deps.profiles.mayUse(actor, profileName);
  }

  /** A run here is decided at once; a run a worker holds gets the decision with the worker's next heartbeat, within a second. */
  private async deliver(run: RunRecord, stepName: string, decision: ApprovalDecision): Promise<void> {
    const handle = this.deps.executor.handle(run.id);
    if (handle === undefined && run.dispatchTarget === 'remote' && run.status === RunStatus.Waiting) {
      if (!(await this.deps.queries.hasStep(run, stepName))) throw new NotFoundError(`no step ${stepName} in this run`);
      await queueRunCommand(this.deps.db, run.id, run.attemptId, { kind: decision.action, stepName, inputs: decision.inputs, reason: decision.reason });
      return;
    }
    if (handle === undefined) throw new BadRequestError('the run is not waiting for approval');
    if (decision.action === 'approve') handle.approve(stepName, decision.inputs);
    else handle.reject(stepName, decision.reason);
  }

  private async setStatusOf(actor: Actor, run: RunRecord, stepName: string, status: number): Promise<void> {
    if (run.status === RunStatus.Running) throw new BadRequestError('the run is running: its steps cannot be changed by hand');
    const node = await this.deps.queries.step(run, stepName);
    await setNodeData(this.deps.db, run.id, stepName, { ...(node.data as object), status, statusLabel: nodeStatusLabel(status as NodeStatus) });
    await auditRun(this.deps.db, actor, 'run.step.status_set', run, { stepName, status });
  }

  /**
   * The definition as the database has it now: a DAG just created or changed through another
   * coordinator starts as stored. The profile counter read with it goes with the start.
   */
  private async storedDag(fileName: string): Promise<{ dag: Dag; yaml: string; profilesVersion: number }> {
    const { entry, profilesVersion } = await this.deps.index.refresh(fileName);
    if (entry === undefined) throw new NotFoundError('DAG not found', { fileName });
    if (entry.result.dag === undefined) throw new BadRequestError(`the DAG definition is invalid: ${entry.result.errors.join('; ')}`, { errors: entry.result.errors });
    return { dag: entry.result.dag, yaml: entry.text, profilesVersion };
  }
}

function inlineDag(spec: string, name: string | undefined): { dag: Dag; yaml: string } {
  if (name !== undefined && !isValidInlineRunName(name)) throw new BadRequestError('name must be at most 40 characters of [A-Za-z0-9_.-]', { name });
  const loaded = loadDag(spec, { fileName: name ?? 'inline' });
  if (loaded.dag === undefined) throw new BadRequestError(`invalid spec: ${loaded.errors.join('; ')}`, { errors: loaded.errors });
  return { dag: loaded.dag, yaml: spec };
}

/**
 * A start made from cached definitions is decided again on what the database holds when it
 * failed for a reason stale definitions could give: they changed (the insert's check), or a
 * refusal (params the DAG now takes, a profile made since) that a fresh read may not repeat.
 * Nothing was recorded: each refusal comes before the run's insert, or is the insert's.
 */
function mayBeStale(error: unknown): boolean {
  return [StaleDefinitionsError, BadRequestError, NotFoundError, ForbiddenError, AlreadyExistsError, MaxRunReachedError, AlreadyRunningConflictError].some((kind) => error instanceof kind);
}

function startRequest(
  base: { dag: Dag; yaml: string; profilesVersion?: number },
  fileName: string,
  options: StartOptions,
  trigger: string,
  actor: Actor,
  singleton: NonNullable<StartRequest['singleton']>,
  expect?: DefinitionVersions,
): StartRequest {
  const request: StartRequest = { yaml: base.yaml, fileName, dag: base.dag, trigger, actor };
  // A start from cached definitions resolves its entries at the counter its insert checks.
  const profilesAsOf = expect?.profiles ?? base.profilesVersion;
  if (expect !== undefined) request.expect = expect;
  if (profilesAsOf !== undefined) request.profilesAsOf = profilesAsOf;
  if (options.params !== undefined) request.params = options.params;
  if (options.dagRunId !== undefined) request.dagRunId = options.dagRunId;
  if (options.dagName !== undefined) request.dagName = options.dagName;
  if (options.noReuse !== undefined) request.noReuse = options.noReuse;
  if (options.queue !== undefined) request.queue = options.queue;
  if (options.singleton === true) request.singleton = singleton;
  if (options.profileName !== undefined) request.profileName = options.profileName;
  return request;
}
