/** Response schemas of the system endpoints: health, scheduler pause, resource history, event logs. */
import { z } from 'zod';

const healthFields = {
  status: z.enum(['healthy', 'unhealthy']),
  version: z.string(),
  uptime: z.number().int().describe('Seconds since start'),
  timestamp: z.string(),
};

export const healthSchema = z.object(healthFields).meta({ id: 'Health' });

/** The contract's 503 body of /health: the same fields plus what is wrong. */
export const unhealthySchema = z.object({ ...healthFields, error: z.string() }).meta({ id: 'Unhealthy' });

export const schedulerPauseSchema = z
  .object({
    paused: z.boolean(),
    pausedAt: z.string().optional(),
    pausedBy: z.string().optional(),
    reason: z.string().optional(),
  })
  .meta({ id: 'SchedulerPause', description: 'pausedAt, pausedBy and reason only while paused (reason only when given)' });

const seriesSchema = z.array(z.object({ timestamp: z.string(), value: z.number() }));

export const resourceHistorySchema = z.object({
  duration: z.string(),
  intervalSeconds: z.number(),
  cpu: seriesSchema,
  memory: seriesSchema,
  disk: seriesSchema,
  load: seriesSchema,
});

const eventSchema = z
  .object({
    id: z.string(),
    occurredAt: z.string(),
    kind: z.string(),
    type: z.string(),
    dagName: z.string(),
    dagRunId: z.string(),
    attemptId: z.string(),
    sessionId: z.string(),
    userId: z.string(),
    model: z.string(),
    message: z.string(),
    data: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'EventRecord' });

export const eventPageSchema = z.object({
  entries: z.array(eventSchema),
  total: z.number().int().optional().describe('Offset pagination only'),
  limit: z.number().int().optional().describe('Offset pagination only'),
  offset: z.number().int().optional().describe('Offset pagination only'),
  nextCursor: z.string().nullable().optional().describe('Cursor pagination only; null on the last page'),
});

/** Text bodies: the metrics exposition and server-sent event streams. */
export const textBody = z.string();
