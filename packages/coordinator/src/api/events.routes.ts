import { z } from 'zod';
import { InvalidCursorError, listEvents, type Db, type EventRecord } from '@trellis/store';
import { defineRoute, type AnyRoute } from '../http/routes.js';
import { BadRequestError } from '../errors/api-errors.js';
import { instantQuery } from '../http/timestamps.js';
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

function eventBody(event: EventRecord) {
  return { ...event, id: String(event.id), occurredAt: event.occurredAt.toISOString() };
}

export function eventRoutes(db: Db): AnyRoute[] {
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
      handler: async ({ query }) => {
        const { paginationMode, cursor, offset, ...filter } = query;
        try {
          const page =
            paginationMode === 'cursor'
              ? await listEvents(db, { ...filter, ...(cursor !== undefined ? { cursor } : {}) })
              : await listEvents(db, { ...filter, offset: offset ?? 0 });
          return {
            entries: page.events.map(eventBody),
            ...(page.total !== undefined ? { total: page.total, limit: query.limit, offset: offset ?? 0 } : {}),
            ...(paginationMode === 'cursor' ? { nextCursor: page.nextCursor ?? null } : {}),
          };
        } catch (error) {
          if (error instanceof InvalidCursorError) throw new BadRequestError('invalid cursor', { cursor });
          throw error;
        }
      },
    }),
  ];
}
