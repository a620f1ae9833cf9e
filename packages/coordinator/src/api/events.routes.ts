import { z } from 'zod';
import { defineRoute, type AnyRoute } from '../http/routes.js';
import { instantQuery } from '../http/timestamps.js';
import type { EventLog } from '../runs/event-log.js';
import { eventPageSchema } from './system.schemas.js';

const eventQuery = z.object({
  kind: z.string().optional(),
  type: z.string().optional(),
  dagName: z.string().optional(),
  dagRunId: z.string().optional(),
  attemptId: z.string().optional(),
  sessionId: z.string().optional(),
  userId: z.string().optional(),
  model: z.string().optional(),
  startTime: instantQuery.optional(),
  endTime: instantQuery.optional(),
  limit: z.coerce.number().int().min(1, 'limit must be 1-1000').max(1000, 'limit must be 1-1000').default(100),
  offset: z.coerce.number().int().min(0, 'offset must be 0 or more').optional(),
  paginationMode: z.enum(['offset', 'cursor']).default('offset'),
  cursor: z.string().optional(),
});

export function eventRoutes(events: EventLog): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/event-logs',
      operationId: 'listEventLogs',
      permission: 'audit:read',
      summary: 'Event records, newest first: run lifecycle, worker registration and loss, scheduler leadership, definition changes',
      tag: 'system',
      response: eventPageSchema,
      query: eventQuery,
      errors: [400],
      handler: ({ query }) => events.list(query),
    }),
  ];
}
