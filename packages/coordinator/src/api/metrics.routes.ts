import { defineRoute, HANDLED, type AnyRoute } from '../http/routes.js';
import { textBody } from './system.schemas.js';
import type { ServiceMetrics } from '../metrics/service-metrics.js';

/** `access` is the `metrics` setting: answered to anyone, or only with credentials (a scraper's API key). */
export function metricsRoutes(metrics: ServiceMetrics, access: 'public' | 'private'): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/metrics',
      operationId: 'getMetrics',
      summary: 'Prometheus metrics: svc_* service, queue, worker, dispatch and HTTP metrics, plus Node runtime and process metrics',
      tag: 'system',
      permission: access === 'public' ? 'public' : 'authenticated',
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
