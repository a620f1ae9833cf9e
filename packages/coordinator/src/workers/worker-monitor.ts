import { hostname } from 'node:os';
import { countLiveCoordinators, failRunsOfLostWorkers, pruneWorkers, recordHeartbeat, requeueUnacked, upsertWorker, type Db } from '@trellis/store';
import { toError } from '@trellis/core';
import type { Logger } from '../logging/logger.js';

export interface WorkerMonitorOptions {
  db: Db;
  logger: Logger;
  /** Seconds a hand-out may wait for its ack before it goes back to the queue. */
  ackTimeoutSec: number;
  /** Seconds of heartbeat silence after which a worker's started runs fail. */
  heartbeatTimeoutSec: number;
  /** Something was requeued or freed. */
  onChange: () => void;
  /** This coordinator's own executor heartbeats with every check, so other coordinators can tell it is alive. */
  localWorkerId: string;
  /** How many other coordinators are alive on the database, after every check. */
  onPeers: (count: number) => void;
  /** Workers left the list: silent for twice the heartbeat timeout with nothing running (they register again if they come back). */
  onPruned: (workerIds: string[]) => void;
}

const CHECK_MS = 1000;
/** Dead workers are looked for every this many checks: a lost worker leaves the list within this much of its bound. */
const PRUNE_EVERY_CHECKS = 5;

/**
 * Takes back hand-outs no worker acknowledged, fails runs of workers that went silent, and
 * forgets workers silent for twice the heartbeat timeout.
 * Silence is judged only once this coordinator has been up for a whole timeout: after a
 * restart, every heartbeat in the table is old, and the workers need a moment to come back.
 */
export async function startWorkerMonitor(options: WorkerMonitorOptions): Promise<() => void> {
  await upsertWorker(options.db, { id: options.localWorkerId, labels: {}, pollers: 0, hostname: hostname(), version: 'coordinator' });
  const startedAt = Date.now();
  let busy = false;
  let checks = 0;
  const check = async (): Promise<void> => {
    checks += 1;
    await recordHeartbeat(options.db, options.localWorkerId, [], 0, 0);
    options.onPeers(await countLiveCoordinators(options.db, options.localWorkerId, options.heartbeatTimeoutSec));
    const requeued = await requeueUnacked(options.db, options.ackTimeoutSec);
    for (const run of requeued) options.logger.warn('hand-out not acknowledged in time; back to the queue', { dagName: run.dagName, dagRunId: run.dagRunId });
    let failed = 0;
    if (Date.now() - startedAt >= options.heartbeatTimeoutSec * 1000) {
      const lost = await failRunsOfLostWorkers(options.db, options.heartbeatTimeoutSec);
      for (const run of lost) options.logger.error('run failed: its worker or coordinator was lost', { dagName: run.dagName, dagRunId: run.dagRunId, worker: run.workerId, error: run.error });
      failed = lost.length;
      if (checks % PRUNE_EVERY_CHECKS === 0) {
        const pruned = await pruneWorkers(options.db, options.heartbeatTimeoutSec * 2);
        if (pruned.length > 0) {
          options.logger.info('lost workers left the list', { workers: pruned });
          options.onPruned(pruned);
        }
      }
    }
    if (requeued.length + failed > 0) options.onChange();
  };
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    check()
      .catch((error: unknown) => options.logger.error('worker monitor check failed', { error: toError(error) }))
      .finally(() => {
        busy = false;
      });
  }, CHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
}
