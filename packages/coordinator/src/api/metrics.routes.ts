import { defineRoute, HANDLED, type AnyRoute } from '../http/routes.js';
import { textBody } from './system.schemas.js';
import type { ServiceMetrics } from '../metrics/service-metrics.js';

export function metricsRoutes(metrics: ServiceMetrics): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/metrics',
      operationId: 'getMetrics',
      summary: 'Prometheus metrics: svc_* service, queue, worker, dispatch and HTTP metrics, plus Node runtime and process metrics',
      tag: 'system',
      response: textBody,
      produces: 'text/plain',
      handler: async ({ res }) => {
        const text = await metrics.scrape();
        res.type(metrics.registry.contentType).send(text);
        return HANDLED;
      },
    }),
  ];
}
