import { defineRoute, type AnyRoute } from '../http/routes.js';
import { ServiceUnavailableError } from '../errors/api-errors.js';
import { workerListSchema } from './worker.schemas.js';
import type { WorkerHealth, WorkerRegistry } from '../dispatch/worker-registry.js';

export interface WorkerRoutesDeps {
  registry: WorkerRegistry;
  /** The worker gRPC server is listening. */
  grpcRunning: boolean;
}

/** The contract's names for the health states (metrics keep the short ones as label values). */
const HEALTH_STATUS: Record<WorkerHealth, string> = {
  healthy: 'WORKER_HEALTH_STATUS_HEALTHY',
  warning: 'WORKER_HEALTH_STATUS_WARNING',
  unhealthy: 'WORKER_HEALTH_STATUS_UNHEALTHY',
};

export function workerRoutes(deps: WorkerRoutesDeps): AnyRoute[] {
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
        if (!deps.grpcRunning) throw new ServiceUnavailableError('the worker gRPC server is not running on this coordinator');
        const workers = await deps.registry.list();
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
