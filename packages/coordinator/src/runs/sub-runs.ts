import { isTerminalRunStatus, type StartSubRunRequest, type StopSubRunRequest } from '@trellis/core';
import { getRun, type Db, type RunRecord } from '@trellis/store';
import type { Logger } from '../logging/logger.js';
import type { RunService } from './run-service.js';
import { waitForRunEnd, type RunWaitOptions, type RunWaitResult } from './run-waiter.js';
import type { RunEnds } from './run-ends.js';

export interface SubRunsDeps {
  db: Db;
  logger: Logger;
  runs: RunService;
  ends: RunEnds;
}

/** What stopping a child came to: it is no child of that parent, it had already ended, or it was stopped. */
export type SubRunStop = 'not_a_child' | 'already_ended' | 'stopped';

/** The sub-DAG runs a worker's running attempt starts, waits for and stops. */
export class SubRuns {
  constructor(private readonly deps: SubRunsDeps) {}

  /** Queues the child (see RunService.enqueueChild); undefined when the parent attempt is no longer the worker's current one. */
  async start(request: StartSubRunRequest): Promise<RunRecord | undefined> {
    const parent = await getRun(this.deps.db, request.parent.dagName, request.parent.dagRunId);
    if (parent === undefined || parent.attemptId !== request.parent.attemptId || parent.workerId !== request.workerId) return undefined;
    return this.deps.runs.enqueueChild(parent, request);
  }

  /** Stops a child with its parent; only the parent's own children: a worker cannot stop arbitrary runs this way. */
  async stop(request: StopSubRunRequest): Promise<SubRunStop> {
    const child = await getRun(this.deps.db, request.dagName, request.dagRunId);
    if (child === undefined || child.parentDagRunName !== request.parent.dagName || child.parentDagRunId !== request.parent.dagRunId) return 'not_a_child';
    if (isTerminalRunStatus(child.status)) return 'already_ended';
    await this.deps.runs.stop(child);
    this.deps.logger.info('sub-DAG run stopped with its parent', { dagName: child.dagName, dagRunId: child.dagRunId, parentDagRunId: request.parent.dagRunId });
    return 'stopped';
  }

  /** Waits for a run to end (see waitForRunEnd); one that ends through this coordinator ends the wait at once. */
  wait(dagName: string, dagRunId: string, options: Omit<RunWaitOptions, 'wakeOn'>): Promise<RunWaitResult> {
    return waitForRunEnd(this.deps.db, dagName, dagRunId, { ...options, wakeOn: this.deps.ends.wakeOn(dagName, dagRunId) });
  }
}
