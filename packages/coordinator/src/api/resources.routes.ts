import { z } from 'zod';
import { parseDuration } from '@trellis/core';
import { defineRoute, type AnyRoute } from '../http/routes.js';
import { resourceHistorySchema } from './system.schemas.js';
import { SAMPLE_EVERY_MS, type ResourceHistory } from '../metrics/resource-history.js';

const DAY_MS = 24 * 60 * 60 * 1000;

const historyQuery = z.object({
  duration: z
    .string()
    .optional()
    .transform((text, ctx) => {
      if (text === undefined) return 60 * 60 * 1000;
      const ms = parseDuration(text);
      if (ms === undefined || ms > DAY_MS) {
        ctx.addIssue({ code: 'custom', message: 'duration must look like 30m, 2h or 1h30m, at most 24h' });
        return z.NEVER;
      }
      return ms;
    }),
});

export function resourceRoutes(history: ResourceHistory): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/services/resources/history',
      operationId: 'getResourceHistory',
      permission: 'dags:read',
      summary: 'Host CPU, memory, disk and 1-minute load average, sampled every 5 s and kept 24 h',
      tag: 'system',
      response: resourceHistorySchema,
      query: historyQuery,
      errors: [400],
      handler: ({ query }) => {
        const samples = history.since(query.duration);
        const series = (pick: (s: (typeof samples)[number]) => number) => samples.map((s) => ({ timestamp: new Date(s.at).toISOString(), value: pick(s) }));
        return Promise.resolve({
          duration: `${Math.round(query.duration / 1000)}s`,
          intervalSeconds: SAMPLE_EVERY_MS / 1000,
          cpu: series((s) => s.cpuPercent),
          memory: series((s) => s.memoryPercent),
          disk: series((s) => s.diskPercent),
          load: series((s) => s.load1),
        });
      },
    }),
  ];
}
