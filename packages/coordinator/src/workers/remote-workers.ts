import {
  RunStatus,
  type AckTaskResponse, type HeartbeatRequest, type HeartbeatResponse, type RegisterRequest, type RegisterResponse, type ReportEvent, type Task, type TaskRef,
} from '@trellis/core';
import { ackRun, attemptsAssignedTo, cancellationsFor, reconcileHeldAttempts, recordHeartbeat, releaseLease, takeRunCommands, updateRunStatus, type Db } from '@trellis/store';
import type { Logger } from '../logging/logger.js';
import type { RunObserver } from '../execution/run-observer.js';
import type { SpecCache } from '../execution/spec-cache.js';
import type { RemotePollers } from '../admission/remote-pollers.js';
import type { ReportApplier } from '../execution/report-applier.js';
import type { WorkerRegistry } from './worker-registry.js';
import { taskFor } from '../execution/task.js';
import { UnstartableAttemptError, type ProfileResolver } from '../execution/attempt-profile.js';
import type { InputSealer } from '../runs/masked-params.js';

const HEARTBEAT_INTERVAL_MS = 1000;
/**
 * A started attempt missing from what its worker holds is spared this long after its ack: the
 * ack's answer may still be on its way, and a call listing what the worker holds may have left
 * before it. Three heartbeats; a restarted process's runs were acknowledged long before.
 */
const HELD_GRACE_SEC = 3;

export interface RemoteWorkersDeps {
  db: Db;
  logger: Logger;
  registry: WorkerRegistry;
  pollers: RemotePollers;
  applier: ReportApplier;
  specs: SpecCache;
  /** The folder of the DAG files: their relative dotenv files travel with each task. */
  dagsDir: string;
  /** New work may be queued (`work`), or a run finished and freed its slot (`slot`): admit more. */
  wake: (reason?: 'work' | 'slot') => void;
  observer: RunObserver;
  /** Each attempt's runtime-profile values, sent in its task. */
  profiles: ProfileResolver;
  /** Opens the sealed inputs of runs that carry secrets. */
  sealer: InputSealer;
}

/** The call a poll waits in: whether the worker gave up on it, before or just after its answer. */
export interface PollCall {
  readonly cancelled: boolean;
  once(event: 'cancelled', listener: () => void): unknown;
  /** The worker gave up on the call after its answer left, so it never used the answer. */
  onGivenUpAfterAnswer?(listener: () => void): void;
}

/** A poll's answer: nothing for a worker this coordinator does not know (it must register again), else a task or none. */
export type PollOutcome = { registered: false } | { registered: true; task: Task | undefined };

/** The coordinator's side of the worker protocol: registration, hand-outs, acks, heartbeats and reports. */
export class RemoteWorkers {
  constructor(private readonly deps: RemoteWorkersDeps) {}

  async register(request: RegisterRequest): Promise<RegisterResponse> {
    const deps = this.deps;
    await deps.registry.register({ id: request.workerId, labels: request.labels, pollers: Math.max(1, request.pollers), hostname: request.hostname, version: request.version });
    deps.logger.info('worker registered', { worker: request.workerId, labels: request.labels, pollers: request.pollers, hostname: request.hostname });
    if (request.listsHeld) await this.reconcileHeld(request.workerId, request.held, true);
    deps.wake();
    return { heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS, assigned: await attemptsAssignedTo(deps.db, request.workerId) };
  }

  /** Waits up to `waitMs` for a run the worker may take, and hands it out as a task. */
  async poll(workerId: string, waitMs: number, call: PollCall): Promise<PollOutcome> {
    const deps = this.deps;
    const labels = deps.registry.labelsOf(workerId);
    if (labels === undefined) return { registered: false };
    const leased = await deps.pollers.poll(workerId, labels, waitMs, (onCancel) => call.once('cancelled', onCancel));
    if (leased === undefined) return { registered: true, task: undefined };
    const { run, profilesVersion } = leased;
    const giveBack = async (): Promise<void> => {
      await releaseLease(deps.db, run.id, run.attemptId);
      deps.wake();
    };
    if (call.cancelled) {
      await giveBack();
      return { registered: true, task: undefined };
    }
    // A worker that gave up on the call as the answer left never uses the task: the lease goes
    // back now instead of after the ack timeout (a stopping worker cancels its polls).
    call.onGivenUpAfterAnswer?.(() => void giveBack().catch((error: unknown) => deps.logger.warn('could not give back a hand-out the worker gave up on; the ack timeout will', { dagRunId: run.dagRunId, error })));
    try {
      return { registered: true, task: await taskFor(deps.db, deps.specs, deps, run, deps.dagsDir, profilesVersion) };
    } catch (error) {
      if (!(error instanceof UnstartableAttemptError)) throw error;
      // The hand-out fails before any worker holds it: its profile cannot be used now.
      await updateRunStatus(deps.db, { runId: run.id, attemptId: run.attemptId, expected: [RunStatus.Running], next: RunStatus.Failed, finishedAt: new Date(), error: error.message });
      deps.logger.warn('run cannot start', { dagRunId: run.dagRunId, error: error.message });
      deps.wake('slot');
      return { registered: true, task: undefined };
    }
  }

  async ack(workerId: string, ref: TaskRef): Promise<AckTaskResponse> {
    const run = await ackRun(this.deps.db, workerId, ref);
    if (run === undefined) return { accepted: false, reason: 'the task was taken back (acknowledged too late, stopped, or superseded by a newer attempt)' };
    this.deps.logger.info('run started', { dagName: run.dagName, dagRunId: run.dagRunId, attemptId: run.attemptId, worker: workerId });
    this.deps.observer.started(run);
    this.deps.applier.remember(workerId, run);
    return { accepted: true, reason: '' };
  }

  /** Records what the worker runs; answers with what to cancel and the decisions waiting for its runs. */
  async heartbeat(request: HeartbeatRequest): Promise<HeartbeatResponse> {
    const deps = this.deps;
    const known = await recordHeartbeat(
      deps.db,
      request.workerId,
      request.running.map((t) => ({ ...t.ref, rootDagRunName: t.rootDagRunName, rootDagRunId: t.rootDagRunId, parentDagRunName: t.parentDagRunName, parentDagRunId: t.parentDagRunId, startedAt: t.startedAt })),
      request.pollersTotal,
      request.pollersBusy,
    );
    if (!known || deps.registry.labelsOf(request.workerId) === undefined) return { cancel: [], reregister: true, commands: [] };
    await this.reconcileHeld(request.workerId, [...request.running.map((t) => t.ref), ...request.claiming], false);
    const [cancel, commands] = await Promise.all([cancellationsFor(deps.db, request.workerId, request.running.map((t) => t.ref)), takeRunCommands(deps.db, request.workerId)]);
    deps.applier.heartbeatAnswered(request.workerId, cancel);
    return { cancel, reregister: false, commands };
  }

  /** Applies a batch of a run's report; a run it ends frees its queue slot. A body that is not JSON throws a SyntaxError. */
  async report(workerId: string, ref: TaskRef, events: ReportEvent[]): Promise<{ appliedSeq: number; stale: boolean }> {
    const outcome = await this.deps.applier.apply(workerId, ref, events);
    if (outcome.finished) this.deps.wake('slot');
    return { appliedSeq: outcome.appliedSeq, stale: outcome.stale };
  }

  /**
   * Ends what the coordinator records on a worker that the worker no longer holds (see
   * reconcileHeldAttempts); on register, hand-outs never acknowledged go back to the queue.
   */
  private async reconcileHeld(workerId: string, held: TaskRef[], registering: boolean): Promise<void> {
    const deps = this.deps;
    const changed = await reconcileHeldAttempts(deps.db, workerId, held, { graceSec: HELD_GRACE_SEC, requeueUnacked: registering });
    if (changed.length === 0) return;
    deps.applier.forget(workerId, changed);
    for (const run of changed) {
      const fields = { dagName: run.dagName, dagRunId: run.dagRunId, worker: workerId };
      if (run.status === RunStatus.Queued) {
        deps.logger.warn('hand-out the worker no longer holds; back to the queue', fields);
        continue;
      }
      deps.logger.error('run ended: its worker no longer holds it', { ...fields, status: run.status, error: run.error });
      deps.observer.finished(run.dagName, run.status, run.startedAt);
    }
    deps.wake('slot');
  }
}
