import { defineRoute, reply, type AnyRoute } from '../http/routes.js';
import type { ServiceHealth } from '../health/service-health.js';
import { healthSchema, unhealthySchema } from './system.schemas.js';

export function systemRoutes(health: ServiceHealth): AnyRoute[] {
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
        const { healthy, report } = await health.report();
        return healthy ? report : reply(503, report);
      },
    }),
  ];
}
