import { defineRoute, reply, type AnyRoute } from '../http/routes.js';
import type { DatabaseProbe } from '../health/database-probe.js';
import { healthSchema, unhealthySchema } from './system.schemas.js';

export interface SystemRoutesDeps {
  version: string;
  startedAt: Date;
  database: DatabaseProbe;
}

export function systemRoutes(deps: SystemRoutesDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/health',
      operationId: 'getHealth',
      permission: 'public',
      summary: 'Service health, version and uptime; 503 with the reason while the database does not answer',
      tag: 'system',
      errors: [503],
      response: healthSchema,
      errorBodies: { 503: unhealthySchema },
      handler: async () => {
        const database = await deps.database.check();
        const body = {
          status: database.ok ? 'healthy' as const : 'unhealthy' as const,
          version: deps.version,
          uptime: Math.floor((Date.now() - deps.startedAt.getTime()) / 1000),
          timestamp: new Date().toISOString(),
        };
        return database.ok ? body : reply(503, { ...body, error: database.error });
      },
    }),
  ];
}
