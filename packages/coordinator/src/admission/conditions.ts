import { RunStatus } from '@trellis/core';
import { queueCounts, type Db, type RunRecord } from '@trellis/store';
import type { QueuedCondition } from '../runs/payloads.js';
import { selectorMatches, type WorkerRegistry } from '../workers/worker-registry.js';

export interface ConditionDeps {
  db: Db;
  registry: WorkerRegistry;
  queueLimit: (queueName: string) => number;
  /** The worker gRPC server is listening. */
  grpcRunning: boolean;
}

function describe(selector: Record<string, string>): string {
  return Object.entries(selector).map(([k, v]) => `${k}=${v}`).join(', ');
}

/** Why a remote run waits for a worker, or undefined when a healthy matching worker exists. */
async function workerReason(deps: ConditionDeps, run: RunRecord): Promise<{ reason: string; message: string } | undefined> {
  if (!deps.grpcRunning) return { reason: 'DispatchUnavailable', message: 'the worker gRPC server is not running on this coordinator' };
  const healthy = (await deps.registry.list()).filter((w) => w.health === 'healthy');
  if (healthy.length === 0) return { reason: 'NoAvailableWorker', message: 'no healthy worker is connected' };
  if (!healthy.some((w) => selectorMatches(run.workerSelector, w.labels))) {
    return { reason: 'WorkerSelectorNotMatched', message: `no healthy worker matches worker_selector {${describe(run.workerSelector)}}` };
  }
  return undefined;
}

/** The contract's `conditions[]` of a queued run: the first thing that holds it back. */
export async function queuedConditions(deps: ConditionDeps, run: RunRecord): Promise<QueuedCondition[]> {
  if (run.status !== RunStatus.Queued) return [];
  const counts = (await queueCounts(deps.db)).get(run.queueName) ?? { queued: 0, running: 0 };
  const limit = deps.queueLimit(run.queueName);
  const condition = (reason: string, message: string): QueuedCondition[] => [{ type: 'Queued', status: 'True', reason, message, checkedAt: new Date().toISOString() }];
  if (counts.running >= limit) return condition('QueueConcurrencyLimitReached', `queue ${run.queueName} has no free slot (${counts.running} of ${limit} running)`);
  if (run.dispatchTarget === 'remote') {
    const waiting = await workerReason(deps, run);
    if (waiting !== undefined) return condition(waiting.reason, waiting.message);
  }
  return condition('DispatchAdmissionPending', `waiting for admission to queue ${run.queueName}`);
}
