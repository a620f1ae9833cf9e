import type * as grpc from '@grpc/grpc-js';
import {
  BadRequestError, isEnvVarName, NotFoundError, NotRunningError, isTerminalRunStatus, RunStatus, validateRunId,
  type AckTaskRequest, type AckTaskResponse, type HeartbeatRequest, type HeartbeatResponse, type PollRequest, type PollResponse,
  type RegisterRequest, type RegisterResponse, type ReportRequest, type ReportResponse, type StartSubRunRequest, type StartSubRunResponse,
  type StopSubRunRequest, type StopSubRunResponse, type WaitRunRequest, type WaitRunResponse,
} from '@trellis/core';
import { ackRun, attemptsAssignedTo, cancellationsFor, getRun, reconcileHeldAttempts, recordHeartbeat, releaseLease, takeRunCommands, type AttemptRef, type Db } from '@trellis/store';
import type { Logger } from '../logging/logger.js';
import type { RemotePollers } from '../dispatch/remote-pollers.js';
import type { ReportApplier } from '../dispatch/report-applier.js';
import type { WorkerRegistry } from '../dispatch/worker-registry.js';
import { taskFor } from '../dispatch/task.js';
import type { RunService } from '../runs/run-service.js';
import type { SpecCache } from '../runs/spec-cache.js';
import type { RunObserver } from '../runs/run-observer.js';
import { waitForRunEnd } from '../runs/run-waiter.js';
import type { CallContext } from './call-context.js';

const HEARTBEAT_INTERVAL_MS = 1000;
const MAX_WAIT_MS = 30_000;
const WORKER_ID = /^[A-Za-z0-9_.:@-]{1,128}$/;
/**
 * A started attempt missing from what its worker holds is spared this long after its ack: the
 * ack's answer may still be on its way, and a call listing what the worker holds may have left
 * before it. Three heartbeats; a restarted process's runs were acknowledged long before.
 */
const HELD_GRACE_SEC = 3;

export interface WorkerServiceDeps {
  db: Db;
  logger: Logger;
  registry: WorkerRegistry;
  pollers: RemotePollers;
  applier: ReportApplier;
  specs: SpecCache;
  /** The folder of the DAG files: their relative dotenv files travel with each task. */
  dagsDir: string;
  runs: RunService;
  /** New work may be queued (`work`), or a run finished and freed its slot (`slot`): admit more. */
  wake: (reason?: 'work' | 'slot') => void;
  observer: RunObserver;
}

type Handler<Req, Res> = (request: Req, metadata: grpc.Metadata, call: CallContext) => Promise<Res>;

export interface WorkerHandlers {
  Register: Handler<RegisterRequest, RegisterResponse>;
  Poll: Handler<PollRequest, PollResponse>;
  AckTask: Handler<AckTaskRequest, AckTaskResponse>;
  Heartbeat: Handler<HeartbeatRequest, HeartbeatResponse>;
  Report: Handler<ReportRequest, ReportResponse>;
  StartSubRun: Handler<StartSubRunRequest, StartSubRunResponse>;
  WaitRun: Handler<WaitRunRequest, WaitRunResponse>;
  StopSubRun: Handler<StopSubRunRequest, StopSubRunResponse>;
}

function requireWorkerId(id: string): void {
  if (!WORKER_ID.test(id)) throw new BadRequestError('worker_id must be 1-128 characters of letters, digits and _ . : @ -');
}

/**
 * Ends what the coordinator records on a worker that the worker no longer holds (see
 * reconcileHeldAttempts); on register, hand-outs never acknowledged go back to the queue.
 */
async function reconcileHeld(deps: WorkerServiceDeps, workerId: string, held: AttemptRef[], registering: boolean): Promise<void> {
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

function knownLabels(deps: WorkerServiceDeps, workerId: string): Record<string, string> {
  const labels = deps.registry.labelsOf(workerId);
  if (labels === undefined) throw new NotFoundError(`worker ${workerId} is not registered with this coordinator; register again`);
  return labels;
}

/** The coordinator's side of the worker protocol. */
export function workerHandlers(deps: WorkerServiceDeps): WorkerHandlers {
  return {
    Register: async (request) => {
      requireWorkerId(request.workerId);
      await deps.registry.register({ id: request.workerId, labels: request.labels, pollers: Math.max(1, request.pollers), hostname: request.hostname, version: request.version });
      deps.logger.info('worker registered', { worker: request.workerId, labels: request.labels, pollers: request.pollers, hostname: request.hostname });
      if (request.listsHeld) await reconcileHeld(deps, request.workerId, request.held, true);
      deps.wake();
      return { heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS, assigned: await attemptsAssignedTo(deps.db, request.workerId) };
    },

    Poll: async (request, _metadata, call) => {
      const labels = knownLabels(deps, request.workerId);
      const waitMs = Math.min(Math.max(request.waitMs, 0), MAX_WAIT_MS);
      const run = await deps.pollers.poll(request.workerId, labels, waitMs, (onCancel) => call.once('cancelled', onCancel));
      if (run === undefined) return {};
      const giveBack = async (): Promise<void> => {
        await releaseLease(deps.db, run.id, run.attemptId);
        deps.wake();
      };
      if (call.cancelled) {
        await giveBack();
        return {};
      }
      // A worker that gave up on the call as the answer left never uses the task: the lease goes
      // back now instead of after the ack timeout (a stopping worker cancels its polls).
      call.onGivenUpAfterAnswer?.(() => void giveBack().catch((error: unknown) => deps.logger.warn('could not give back a hand-out the worker gave up on; the ack timeout will', { dagRunId: run.dagRunId, error })));
      return { task: await taskFor(deps.db, deps.specs, run, deps.dagsDir) };
    },

    AckTask: async (request) => {
      const run = await ackRun(deps.db, request.workerId, request.ref);
      if (run === undefined) return { accepted: false, reason: 'the task was taken back (acknowledged too late, stopped, or superseded by a newer attempt)' };
      deps.logger.info('run started', { dagName: run.dagName, dagRunId: run.dagRunId, attemptId: run.attemptId, worker: request.workerId });
      deps.observer.started(run);
      deps.applier.remember(request.workerId, run);
      return { accepted: true, reason: '' };
    },

    Heartbeat: async (request) => {
      const known = await recordHeartbeat(
        deps.db,
        request.workerId,
        request.running.map((t) => ({ ...t.ref, rootDagRunName: t.rootDagRunName, rootDagRunId: t.rootDagRunId, parentDagRunName: t.parentDagRunName, parentDagRunId: t.parentDagRunId, startedAt: t.startedAt })),
        request.pollersTotal,
        request.pollersBusy,
      );
      if (!known || deps.registry.labelsOf(request.workerId) === undefined) return { cancel: [], reregister: true, commands: [] };
      await reconcileHeld(deps, request.workerId, [...request.running.map((t) => t.ref), ...request.claiming], false);
      const [cancel, commands] = await Promise.all([cancellationsFor(deps.db, request.workerId, request.running.map((t) => t.ref)), takeRunCommands(deps.db, request.workerId)]);
      deps.applier.heartbeatAnswered(request.workerId, cancel);
      return { cancel, reregister: false, commands };
    },

    Report: async (request) => {
      const outcome = await deps.applier.apply(request.workerId, request.ref, request.events).catch((error: unknown) => {
        // A body that is not the JSON the protocol promises is the sender's fault, not ours.
        if (error instanceof SyntaxError) throw new BadRequestError(`malformed report: ${error.message}`);
        throw error;
      });
      if (outcome.finished) deps.wake('slot');
      return { appliedSeq: outcome.appliedSeq, stale: outcome.stale };
    },

    StartSubRun: async (request) => {
      const idProblem = validateRunId(request.dagRunId);
      if (idProblem !== undefined) throw new BadRequestError(`dag_run_id ${idProblem}`);
      const badName = Object.keys(request.env).find((name) => !isEnvVarName(name));
      if (badName !== undefined) throw new BadRequestError(`env: "${badName}" is not an environment variable name`);
      const parent = await getRun(deps.db, request.parent.dagName, request.parent.dagRunId);
      if (parent === undefined || parent.attemptId !== request.parent.attemptId || parent.workerId !== request.workerId) {
        throw new NotRunningError('the parent attempt is no longer current');
      }
      const child = await deps.runs.enqueueChild(parent, request);
      return { dagRunId: child.dagRunId };
    },

    StopSubRun: async (request) => {
      const child = await getRun(deps.db, request.dagName, request.dagRunId);
      // Only the parent's own children: a worker cannot stop arbitrary runs through this call.
      if (child === undefined || child.parentDagRunName !== request.parent.dagName || child.parentDagRunId !== request.parent.dagRunId) {
        throw new NotFoundError(`no child run ${request.dagRunId} of ${request.parent.dagRunId}`);
      }
      if (isTerminalRunStatus(child.status)) return { stopped: false };
      await deps.runs.stop(child);
      deps.logger.info('sub-DAG run stopped with its parent', { dagName: child.dagName, dagRunId: child.dagRunId, parentDagRunId: request.parent.dagRunId });
      return { stopped: true };
    },

    WaitRun: async (request, _metadata, call) => {
      // A worker that gave up on the call (it stopped, or lost the connection) is not waited for.
      const cancelled = new AbortController();
      call.once('cancelled', () => cancelled.abort());
      const end = await waitForRunEnd(deps.db, request.dagName, request.dagRunId, { waitMs: Math.min(Math.max(request.waitMs, 0), MAX_WAIT_MS), signal: cancelled.signal });
      if (end.state === 'missing') throw new NotFoundError(`no run ${request.dagRunId} of ${request.dagName}`);
      if (end.state === 'pending') return { finished: false, status: end.status, outputsJson: '{}', error: '' };
      return { finished: true, status: end.status, outputsJson: JSON.stringify(end.outputs), error: end.error };
    },
  };
}
