import { z } from 'zod';
import { defineRoute, type AnyRoute } from '../http/routes.js';
import type { QueueQueries } from '../runs/queue-queries.js';
import { paginationOf, paginationQuery } from './pagination.js';
import { queueItemsSchema, queueListSchema } from './queue.schemas.js';

export function queueRoutes(queues: QueueQueries): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/queues',
      operationId: 'listQueues',
      permission: 'dags:read',
      summary: 'Queue summaries: global and DAG-based queues with their running and queued counts',
      tag: 'queues',
      response: queueListSchema,
      handler: () => queues.overview(),
    }),
    defineRoute({
      method: 'get',
      path: '/queues/{name}/items',
      operationId: 'listQueueItems',
      permission: 'dags:read',
      summary: 'Runs of one queue, queued (oldest first) or running, paged',
      tag: 'queues',
      response: queueItemsSchema,
      params: z.object({ name: z.string().min(1) }),
      query: paginationQuery.extend({ type: z.enum(['queued', 'running']).default('queued') }),
      errors: [400, 404],
      handler: async ({ params, query }) => {
        const page = await queues.items(params.name, query.type, query.perPage, (query.page - 1) * query.perPage);
        return { name: params.name, type: query.type, items: page.items, pagination: paginationOf(page.total, query.page, query.perPage) };
      },
    }),
  ];
}
