import { defineRoute, type AnyRoute } from '../http/routes.js';
import { workerListSchema } from './worker.schemas.js';
import type { WorkerHealth } from '../workers/worker-registry.js';
import type { ConnectedWorkers } from '../workers/connected-workers.js';

/** The contract's names for the health states (metrics keep the short ones as label values). */
const HEALTH_STATUS: Record<WorkerHealth, string> = {
  healthy: 'WORKER_HEALTH_STATUS_HEALTHY',
  warning: 'WORKER_HEALTH_STATUS_WARNING',
  unhealthy: 'WORKER_HEALTH_STATUS_UNHEALTHY',
};

export function workerRoutes(connected: ConnectedWorkers): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/workers',
      operationId: 'listWorkers',
      permission: 'dags:read',
      summary: 'Registered workers with their labels, health (from heartbeat age) and running tasks',
      tag: 'workers',
      response: workerListSchema,
      errors: [503],
      handler: async () => {
        const workers = await connected.list();
        return {
          workers: workers.map((w) => ({
            id: w.id,
            labels: w.labels,
            health_status: HEALTH_STATUS[w.health],
            last_heartbeat: w.lastHeartbeat.toISOString(),
            hostname: w.hostname,
            pollers: { total: w.pollers, busy: w.pollersBusy },
            running_tasks: w.running.map((t) => ({
              dagName: t.dagName,
              dagRunId: t.dagRunId,
              rootDagRunName: t.rootDagRunName,
              rootDagRunId: t.rootDagRunId,
              parentDagRunName: t.parentDagRunName,
              parentDagRunId: t.parentDagRunId,
              startedAt: t.startedAt,
            })),
          })),
        };
      },
    }),
  ];
}
