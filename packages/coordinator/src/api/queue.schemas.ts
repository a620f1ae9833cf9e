/** Response schemas of the queue endpoints. */
import { z } from 'zod';
import { paginationSchema } from './pagination.js';
import { runSummarySchema } from './run.schemas.js';

const queueSummarySchema = z
  .object({
    name: z.string(),
    type: z.enum(['global', 'dag-based']),
    maxConcurrency: z.number().int().optional().describe('Global queues only'),
    runningCount: z.number().int(),
    queuedCount: z.number().int(),
    running: z.array(runSummarySchema).describe('Running runs, at most 50'),
  })
  .meta({ id: 'QueueSummary' });

export const queueListSchema = z.object({
  queues: z.array(queueSummarySchema),
  summary: z.object({
    totalQueues: z.number().int(),
    totalRunning: z.number().int(),
    totalQueued: z.number().int(),
    globalCapacity: z.number().int(),
    globalAvailable: z.number().int(),
  }),
});

export const queueItemsSchema = z.object({
  name: z.string(),
  type: z.enum(['queued', 'running']),
  items: z.array(runSummarySchema),
  pagination: paginationSchema,
});
