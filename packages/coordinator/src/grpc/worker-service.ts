import type * as grpc from '@grpc/grpc-js';
import { BadRequestError, isEnvVarName, isValidWorkerId, NotFoundError, NotRunningError, validateRunId, type CoordinatorMethod, type CoordinatorMethods } from '@trellis/core';
import type { RemoteWorkers } from '../workers/remote-workers.js';
import type { SubRuns } from '../runs/sub-runs.js';
import type { CallContext } from './call-context.js';

const MAX_WAIT_MS = 30_000;

export interface WorkerServiceDeps {
  workers: RemoteWorkers;
  subRuns: SubRuns;
}

type Handler<Req, Res> = (request: Req, metadata: grpc.Metadata, call: CallContext) => Promise<Res>;

/** One handler per unary call of the .proto (the generated method map: a new call fails to compile until handled). */
export type WorkerHandlers = { [M in CoordinatorMethod]: Handler<CoordinatorMethods[M]['request'], CoordinatorMethods[M]['response']> };

function requireWorkerId(id: string): void {
  if (!isValidWorkerId(id)) throw new BadRequestError('worker_id must be 1-128 characters of letters, digits and _ . : @ -');
}

const waitOf = (waitMs: number): number => Math.min(Math.max(waitMs, 0), MAX_WAIT_MS);

/** The coordinator's side of the worker protocol: each call checks its request and hands it to a service. */
export function workerHandlers(deps: WorkerServiceDeps): WorkerHandlers {
  return {
    Register: async (request) => {
      requireWorkerId(request.workerId);
      return await deps.workers.register(request);
    },

    Poll: async (request, _metadata, call) => {
      const outcome = await deps.workers.poll(request.workerId, waitOf(request.waitMs), call);
      if (!outcome.registered) throw new NotFoundError(`worker ${request.workerId} is not registered with this coordinator; register again`);
      return outcome.task !== undefined ? { task: outcome.task } : {};
    },

    AckTask: (request) => deps.workers.ack(request.workerId, request.ref),

    Heartbeat: (request) => deps.workers.heartbeat(request),

    Report: (request) =>
      deps.workers.report(request.workerId, request.ref, request.events).catch((error: unknown) => {
        // A body that is not the JSON the protocol promises is the sender's fault, not ours.
        if (error instanceof SyntaxError) throw new BadRequestError(`malformed report: ${error.message}`);
        throw error;
      }),

    StartSubRun: async (request) => {
      const idProblem = validateRunId(request.dagRunId);
      if (idProblem !== undefined) throw new BadRequestError(`dag_run_id ${idProblem}`);
      const badName = Object.keys(request.env).find((name) => !isEnvVarName(name));
      if (badName !== undefined) throw new BadRequestError(`env: "${badName}" is not an environment variable name`);
      const child = await deps.subRuns.start(request);
      if (child === undefined) throw new NotRunningError('the parent attempt is no longer current');
      return { dagRunId: child.dagRunId };
    },

    StopSubRun: async (request) => {
      const outcome = await deps.subRuns.stop(request);
      if (outcome === 'not_a_child') throw new NotFoundError(`no child run ${request.dagRunId} of ${request.parent.dagRunId}`);
      return { stopped: outcome === 'stopped' };
    },

    WaitRun: async (request, _metadata, call) => {
      // A worker that gave up on the call (it stopped, or lost the connection) is not waited for.
      const cancelled = new AbortController();
      call.once('cancelled', () => cancelled.abort());
      const end = await deps.subRuns.wait(request.dagName, request.dagRunId, { waitMs: waitOf(request.waitMs), signal: cancelled.signal });
      if (end.state === 'missing') throw new NotFoundError(`no run ${request.dagRunId} of ${request.dagName}`);
      if (end.state === 'pending') return { finished: false, status: end.status, outputsJson: '{}', error: '' };
      return { finished: true, status: end.status, outputsJson: JSON.stringify(end.outputs), error: end.error };
    },
  };
}
