import { hostname } from 'node:os';
import { countLiveCoordinators, failRunsOfLostWorkers, recordHeartbeat, requeueUnacked, upsertWorker, type Db } from '@trellis/store';
import type { Logger } from '../logging/logger.js';
import { toError } from '../errors/normalize.js';

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
}

const CHECK_MS = 1000;

/**
 * Takes back hand-outs no worker acknowledged, and fails runs of workers that went silent.
 * Silence is judged only once this coordinator has been up for a whole timeout: after a
 * restart, every heartbeat in the table is old, and the workers need a moment to come back.
 */
export async function startWorkerMonitor(options: WorkerMonitorOptions): Promise<() => void> {
  await upsertWorker(options.db, { id: options.localWorkerId, labels: {}, pollers: 0, hostname: hostname(), version: 'coordinator' });
  const startedAt = Date.now();
  let busy = false;
  const check = async (): Promise<void> => {
    await recordHeartbeat(options.db, options.localWorkerId, [], 0, 0);
    options.onPeers(await countLiveCoordinators(options.db, options.localWorkerId, options.heartbeatTimeoutSec));
    const requeued = await requeueUnacked(options.db, options.ackTimeoutSec);
    for (const run of requeued) options.logger.warn('hand-out not acknowledged in time; back to the queue', { dagName: run.dagName, dagRunId: run.dagRunId });
    let failed = 0;
    if (Date.now() - startedAt >= options.heartbeatTimeoutSec * 1000) {
      const lost = await failRunsOfLostWorkers(options.db, options.heartbeatTimeoutSec);
      for (const run of lost) options.logger.error('run failed: its worker or coordinator was lost', { dagName: run.dagName, dagRunId: run.dagRunId, worker: run.workerId, error: run.error });
      failed = lost.length;
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
