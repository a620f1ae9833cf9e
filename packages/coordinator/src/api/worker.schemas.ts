/** Response schema of the worker list. */
import { z } from 'zod';

const workerSchema = z
  .object({
    id: z.string(),
    labels: z.record(z.string(), z.string()),
    health_status: z.enum(['WORKER_HEALTH_STATUS_HEALTHY', 'WORKER_HEALTH_STATUS_WARNING', 'WORKER_HEALTH_STATUS_UNHEALTHY']),
    last_heartbeat: z.string(),
    hostname: z.string(),
    pollers: z.object({ total: z.number().int(), busy: z.number().int() }),
    running_tasks: z.array(
      z.object({
        dagName: z.string(),
        dagRunId: z.string(),
        rootDagRunName: z.string(),
        rootDagRunId: z.string(),
        parentDagRunName: z.string(),
        parentDagRunId: z.string(),
        startedAt: z.string(),
      }),
    ),
  })
  .meta({ id: 'Worker' });

export const workerListSchema = z.object({ workers: z.array(workerSchema) });
