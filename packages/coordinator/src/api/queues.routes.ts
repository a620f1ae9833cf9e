import { z } from 'zod';
import { queueCounts, queueItems, type Db } from '@trellis/store';
import { defineRoute, type AnyRoute } from '../http/routes.js';
import { NotFoundError } from '../errors/api-errors.js';
import { runSummary } from '../runs/payloads.js';
import { paginationOf, paginationQuery } from './pagination.js';
import { queueItemsSchema, queueListSchema } from './queue.schemas.js';

export interface QueueRoutesDeps {
  db: Db;
  globalQueues: Map<string, number>;
  /** A DAG of this name exists: its DAG-based queue exists even while empty. */
  isDag: (name: string) => boolean;
}

const RUNNING_SHOWN = 50;

export function queueRoutes(deps: QueueRoutesDeps): AnyRoute[] {
  /** Configured global queues always; DAG-based ones while they hold runs. */
  const knownQueues = async () => {
    const counts = await queueCounts(deps.db);
    const names = [...new Set([...deps.globalQueues.keys(), ...counts.keys()])].sort();
    return names.map((name) => ({ name, counts: counts.get(name) ?? { queued: 0, running: 0 } }));
  };
  return [
    defineRoute({
      method: 'get',
      path: '/queues',
      operationId: 'listQueues',
      permission: 'dags:read',
      summary: 'Queue summaries: global and DAG-based queues with their running and queued counts',
      tag: 'queues',
      response: queueListSchema,
      handler: async () => {
        const queues = await Promise.all(
          (await knownQueues()).map(async ({ name, counts }) => {
            const global = deps.globalQueues.has(name);
            const running = await queueItems(deps.db, name, 'running', RUNNING_SHOWN, 0);
            return {
              name,
              type: global ? 'global' : 'dag-based',
              ...(global ? { maxConcurrency: deps.globalQueues.get(name) } : {}),
              runningCount: counts.running,
              queuedCount: counts.queued,
              running: running.items.map((r) => runSummary(r)),
            };
          }),
        );
        const globalCapacity = [...deps.globalQueues.values()].reduce((a, b) => a + b, 0);
        const globalRunning = queues.filter((q) => q.type === 'global').reduce((a, q) => a + q.runningCount, 0);
        return {
          queues,
          summary: {
            totalQueues: queues.length,
            totalRunning: queues.reduce((a, q) => a + q.runningCount, 0),
            totalQueued: queues.reduce((a, q) => a + q.queuedCount, 0),
            globalCapacity,
            globalAvailable: Math.max(0, globalCapacity - globalRunning),
          },
        };
      },
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
        const counts = (await queueCounts(deps.db)).get(params.name);
        if (counts === undefined && !deps.globalQueues.has(params.name) && !deps.isDag(params.name)) throw new NotFoundError(`queue ${params.name} not found`, { name: params.name });
        const page = await queueItems(deps.db, params.name, query.type, query.perPage, (query.page - 1) * query.perPage);
        return {
          name: params.name,
          type: query.type,
          items: page.items.map((r) => runSummary(r)),
          pagination: paginationOf(page.total, query.page, query.perPage),
        };
      },
    }),
  ];
}
