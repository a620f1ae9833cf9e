import { defineRoute, type AnyRoute } from '../http/routes.js';
import { healthSchema, unhealthySchema } from './system.schemas.js';

export interface SystemRoutesDeps {
  version: string;
  startedAt: Date;
}

export function systemRoutes(deps: SystemRoutesDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/health',
      operationId: 'getHealth',
      summary: 'Service health, version and uptime',
      tag: 'system',
      response: healthSchema,
      errorBodies: { 503: unhealthySchema },
      handler: () =>
        Promise.resolve({
          status: 'healthy',
          version: deps.version,
          uptime: Math.floor((Date.now() - deps.startedAt.getTime()) / 1000),
          timestamp: new Date().toISOString(),
        }),
    }),
  ];
}
