import { z } from 'zod';
import { defineRoute, type AnyRoute, actorOf } from '../http/routes.js';
import type { SchedulerPause } from '../scheduler/pause.js';
import { schedulerPauseSchema } from './system.schemas.js';

export interface SchedulerRoutesDeps {
  pause: SchedulerPause;
}

const pauseRequest = z.strictObject({
  paused: z.boolean({ error: 'paused (boolean) is required' }),
  reason: z.string().max(512, 'reason must be at most 512 characters').optional(),
});

export function schedulerRoutes(deps: SchedulerRoutesDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/services/scheduler/pause',
      operationId: 'getSchedulerPause',
      permission: 'authenticated',
      summary: 'Whether the scheduler is paused, since when, by whom and why',
      tag: 'system',
      response: schedulerPauseSchema,
      handler: () => deps.pause.state(),
    }),
    defineRoute({
      method: 'post',
      path: '/services/scheduler/pause',
      operationId: 'setSchedulerPause',
      permission: 'users:manage',
      summary: 'Pause or resume the scheduler: while paused, queued scheduled runs are aborted and missed runs are discarded; manual, webhook and sub-DAG runs still work',
      tag: 'system',
      response: schedulerPauseSchema,
      body: pauseRequest,
      errors: [400],
      handler: (ctx) => deps.pause.set(actorOf(ctx), ctx.body.paused, ctx.body.reason),
    }),
  ];
}
