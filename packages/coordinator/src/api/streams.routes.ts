import type { Request, Response } from 'express';
import { z } from 'zod';
import { isRunStatus, runStatusLabel, BadRequestError } from '@trellis/core';
import { defineRoute, HANDLED, type AnyRoute } from '../http/routes.js';
import { textBody } from './system.schemas.js';
import type { RunEvent, RunEventFilter, RunEventHub } from '../runs/run-event-hub.js';

const KEEPALIVE_MS = 15_000;

function frame(event: RunEvent): string {
  const status = isRunStatus(event.data.status) ? event.data.status : undefined;
  const body = {
    type: event.type,
    dagName: event.dagName,
    dagRunId: event.dagRunId,
    attemptId: event.attemptId,
    ...(status !== undefined ? { status } : {}),
    // The run record's label (`running`), not the event's name for the move (`dag.run.started`).
    statusLabel: status !== undefined ? runStatusLabel(status) : event.type.replace(/^dag\.run\./, ''),
    error: event.message,
    occurredAt: event.occurredAt.toISOString(),
  };
  return `id: ${event.id}\nevent: run\ndata: ${JSON.stringify(body)}\n\n`;
}

/**
 * The event id a client resumes after. Ids are the event log's bigint keys, handed out by this
 * server; one that is no event id (or beyond what a JavaScript number holds exactly) is refused
 * rather than passed to PostgreSQL, which would fail on it.
 */
function resumeAfter(req: Request): number | undefined {
  const lastId = req.header('last-event-id');
  if (lastId === undefined || lastId === '') return undefined;
  const id = /^\d{1,16}$/.test(lastId) ? Number(lastId) : Number.NaN;
  if (!Number.isSafeInteger(id)) throw new BadRequestError('Last-Event-ID must be the id of an event this stream sent (a non-negative integer)', { lastEventId: lastId.slice(0, 64) });
  return id;
}

/** Server-sent events: one `run` event per status change, resumable with Last-Event-ID. */
async function stream(hub: RunEventHub, filter: RunEventFilter, ctx: { req: Request; res: Response; stillAdmitted(): Promise<boolean> }): Promise<typeof HANDLED> {
  const { req, res } = ctx;
  const afterId = resumeAfter(req);
  res.status(200).set({ 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
  // Subscribed before the headers go out: a client that starts a run once its stream is open
  // must not lose that run's first events to the moment the subscription takes its cursor.
  const unsubscribe = await hub.subscribe(filter, afterId, (event) => res.write(frame(event)), () => res.end());
  if (req.destroyed) {
    // The client left while the subscription was set up: nobody is there to unsubscribe later.
    unsubscribe();
    return HANDLED;
  }
  res.flushHeaders();
  res.write('retry: 2000\n\n');
  // Each keepalive also asks whether the caller may still read: credentials revoked after the
  // stream opened (a disabled user, a deleted key) end it.
  const keepalive = setInterval(() => {
    res.write(': keepalive\n\n');
    void ctx.stillAdmitted().then((admitted) => {
      if (!admitted) res.end();
    });
  }, KEEPALIVE_MS);
  req.on('close', () => {
    clearInterval(keepalive);
    unsubscribe();
  });
  return HANDLED;
}

export function streamRoutes(hub: RunEventHub): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/events/dag-runs',
      operationId: 'streamDagRunEvents',
      permission: 'dags:read',
      summary: 'Server-sent events: run status changes of every run (or of one DAG with `name`), resumable with Last-Event-ID',
      tag: 'dag-runs',
      response: textBody,
      query: z.object({ name: z.string().optional() }),
      produces: 'text/event-stream',
      handler: (ctx) => stream(hub, ctx.query.name !== undefined ? { dagName: ctx.query.name } : {}, ctx),
    }),
    defineRoute({
      method: 'get',
      path: '/events/dag-runs/{name}/{dagRunId}',
      operationId: 'streamDagRunStatus',
      permission: 'dags:read',
      summary: 'Server-sent events: status changes of one run, resumable with Last-Event-ID',
      tag: 'dag-runs',
      response: textBody,
      params: z.object({ name: z.string().min(1), dagRunId: z.string().min(1) }),
      produces: 'text/event-stream',
      handler: (ctx) => stream(hub, { dagName: ctx.params.name, dagRunId: ctx.params.dagRunId }, ctx),
    }),
  ];
}
