import type { Request, Response } from 'express';
import { z } from 'zod';
import { isNodeStatus, isRunStatus, nodeStatusLabel, runStatusLabel, BadRequestError, type RunStatus } from '@trellis/core';
import { defineRoute, HANDLED, type AnyRoute } from '../http/routes.js';
import { textBody } from './system.schemas.js';
import { logLinesQuery } from './run.schemas.js';
import type { RunEvent, RunEventFilter, RunEventHub } from '../runs/run-event-hub.js';
import type { LogFollow, LogStart } from '../logs/log-follow.js';
import { RUN_LOG, type LogTarget } from '../runs/run-queries.js';

const KEEPALIVE_MS = 15_000;

/** A step's status change: `event: node`, with the step's status and timing as its run's nodes hold them. */
function nodeFrame(event: RunEvent): string {
  const { stepName, nodeKind, status, statusLabel, startedAt, finishedAt, retryCount, doneCount } = event.data;
  const body = {
    type: event.type,
    dagName: event.dagName,
    dagRunId: event.dagRunId,
    attemptId: event.attemptId,
    stepName,
    handler: nodeKind === 'handler',
    status: isNodeStatus(status) ? status : undefined,
    statusLabel: typeof statusLabel === 'string' ? statusLabel : isNodeStatus(status) ? nodeStatusLabel(status) : '',
    startedAt: startedAt ?? '',
    finishedAt: finishedAt ?? '',
    retryCount: retryCount ?? 0,
    doneCount: doneCount ?? 0,
    error: event.message,
    occurredAt: event.occurredAt.toISOString(),
  };
  return `id: ${event.id}\nevent: node\ndata: ${JSON.stringify(body)}\n\n`;
}

function frame(event: RunEvent): string {
  if (event.kind === 'dag_node') return nodeFrame(event);
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

/** `nodes=true` asks a run stream for step status changes too; streams opened before it existed get none. */
const nodesQuery = z
  .enum(['true', 'false'], { error: 'nodes must be true or false' })
  .default('false')
  .transform((value) => value === 'true');

/** `tail=N`: a log stream starts with the log's last N lines, not its start (a resumed one ignores it). */
const tailQuery = logLinesQuery
  .optional()
  .describe('Start with the last this many lines of the log rather than its start: the first `log` event, sent also when the log is empty; ignored when resuming with Last-Event-ID');

const EVENT_OFFSET = /^\d{1,16}$/;
/** A log event's id: `<attemptId>:<byte offset>`. */
const LOG_EVENT_ID = /^([A-Za-z0-9-]{1,64}):(\d{1,16})$/;

/** A number of an event id, or undefined when it is none (or beyond what a JavaScript number holds exactly). */
function idNumber(text: string): number | undefined {
  const id = EVENT_OFFSET.test(text) ? Number(text) : Number.NaN;
  return Number.isSafeInteger(id) ? id : undefined;
}

function badEventId(lastId: string, form: string): BadRequestError {
  return new BadRequestError(`Last-Event-ID must be the id of an event this stream sent (${form})`, { lastEventId: lastId.slice(0, 64) });
}

/**
 * The event id a client resumes after: an event log key this server handed out. One that is no
 * such id is refused rather than passed to PostgreSQL, which would fail on it.
 */
function resumeAfter(req: Request): number | undefined {
  const lastId = req.header('last-event-id');
  if (lastId === undefined || lastId === '') return undefined;
  const id = idNumber(lastId);
  if (id === undefined) throw badEventId(lastId, 'a non-negative integer');
  return id;
}

/**
 * Where a log stream starts: where it resumes, when the client names an event (its id names the
 * attempt and the byte offset in that attempt's log; a bare offset, the form before attempts were
 * named, names none, so the log is sent again from its start: a repeat rather than a gap); else at
 * the last `tail` lines when asked, or at the log's start.
 */
function logStart(req: Request, tail: number | undefined): LogStart {
  const lastId = req.header('last-event-id');
  if (lastId === undefined || lastId === '') return tail !== undefined ? { tail } : { offset: 0 };
  const match = LOG_EVENT_ID.exec(lastId);
  const offset = idNumber(match?.[2] ?? lastId);
  if (offset === undefined) throw badEventId(lastId, '<attemptId>:<byte offset>');
  return match?.[1] !== undefined ? { attemptId: match[1], offset } : { offset: 0 };
}

type StreamContext = { req: Request; res: Response; stillAdmitted(): Promise<boolean> };
/** Starts sending through `write` (and closes with `end`); resolves to the function that stops it. */
type Subscribe = (write: (frame: string) => void, end: () => void) => Promise<() => void>;

/** A server-sent event stream: headers, retry hint, keepalives that re-check the caller's access, and the end. */
async function serveEvents(ctx: StreamContext, subscribe: Subscribe): Promise<typeof HANDLED> {
  const { req, res } = ctx;
  // Subscribed before the headers go out: a client that starts a run once its stream is open
  // must not lose that run's first events to the moment the subscription takes its cursor. A
  // subscription that fails (no such run) answers as JSON, so frames sent meanwhile wait.
  const early: string[] = [];
  let open = false;
  let ended = false;
  const unsubscribe = await subscribe(
    (text) => (open ? res.write(text) : early.push(text)),
    () => (open ? res.end() : (ended = true)),
  );
  if (req.destroyed) {
    // The client left while the subscription was set up: nobody is there to unsubscribe later.
    unsubscribe();
    return HANDLED;
  }
  res.status(200).set({ 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
  res.flushHeaders();
  res.write('retry: 2000\n\n');
  open = true;
  for (const text of early) res.write(text);
  if (ended) {
    res.end();
    unsubscribe();
    return HANDLED;
  }
  // Each keepalive also asks whether the caller may still read: credentials revoked after the
  // stream opened (a disabled user, a deleted key) end it.
  const keepalive = setInterval(() => {
    res.write(': keepalive\n\n');
    void ctx.stillAdmitted().then((admitted) => {
      if (!admitted) res.end();
    });
  }, KEEPALIVE_MS);
  const close = (): void => {
    clearInterval(keepalive);
    unsubscribe();
  };
  req.on('close', close);
  res.on('finish', close);
  return HANDLED;
}

/**
 * Server-sent events: one `run` event per run status change and, when the filter asks for
 * them, one `node` event per step status change; resumable with Last-Event-ID.
 */
function runStream(hub: RunEventHub, filter: RunEventFilter, ctx: StreamContext): Promise<typeof HANDLED> {
  const afterId = resumeAfter(ctx.req);
  return serveEvents(ctx, (write, end) => hub.subscribe(filter, afterId, (event) => write(frame(event)), end));
}

/**
 * Server-sent events: a `log` event with the text stored since the last one (its id is the
 * attempt and the byte offset after it, so Last-Event-ID resumes without a gap or a repeat, and a
 * retry's log is sent from its start), then `end` with the run's status once the run has ended
 * and all was sent. With `tail` (and no Last-Event-ID) the log is sent from its last `tail` lines.
 */
function logStream(logs: LogFollow, name: string, dagRunId: string, target: LogTarget, tail: number | undefined, ctx: StreamContext): Promise<typeof HANDLED> {
  const start = logStart(ctx.req, tail);
  return serveEvents(ctx, (write, end) =>
    logs.open(name, dagRunId, target, start, {
      send: (update) => write(`id: ${update.attemptId}:${update.offset}\nevent: log\ndata: ${JSON.stringify(update)}\n\n`),
      end: (status) => {
        write(`event: end\ndata: ${JSON.stringify({ status, statusLabel: runStatusLabel(status as RunStatus) })}\n\n`);
        end();
      },
      close: end,
    }),
  );
}

export function streamRoutes(hub: RunEventHub, logs: LogFollow): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/events/dag-runs',
      operationId: 'streamDagRunEvents',
      permission: 'dags:read',
      summary:
        'Server-sent events: run status changes (`run` events) of every run (or of one DAG with `name`), with `nodes=true` also step status changes (`node` events); resumable with Last-Event-ID',
      tag: 'dag-runs',
      response: textBody,
      query: z.object({ name: z.string().optional(), nodes: nodesQuery }),
      produces: 'text/event-stream',
      handler: (ctx) => runStream(hub, { ...(ctx.query.name !== undefined ? { dagName: ctx.query.name } : {}), nodes: ctx.query.nodes }, ctx),
    }),
    defineRoute({
      method: 'get',
      path: '/events/dag-runs/{name}/{dagRunId}',
      operationId: 'streamDagRunStatus',
      permission: 'dags:read',
      summary: 'Server-sent events: status changes of one run (`run` events), with `nodes=true` also of its steps (`node` events); resumable with Last-Event-ID',
      tag: 'dag-runs',
      response: textBody,
      params: z.object({ name: z.string().min(1), dagRunId: z.string().min(1) }),
      query: z.object({ nodes: nodesQuery }),
      produces: 'text/event-stream',
      handler: (ctx) => runStream(hub, { dagName: ctx.params.name, dagRunId: ctx.params.dagRunId, nodes: ctx.query.nodes }, ctx),
    }),
    defineRoute({
      method: 'get',
      path: '/events/dag-runs/{name}/{dagRunId}/log',
      operationId: 'streamDagRunLog',
      permission: 'dags:read',
      summary:
        'Server-sent events: the run log as it grows (`log` events, id = `<attemptId>:<byte offset>`, resumable with Last-Event-ID; from its last `tail` lines when asked), then `end` when the run has ended',
      tag: 'dag-runs',
      response: textBody,
      params: z.object({ name: z.string().min(1), dagRunId: z.string().min(1) }),
      query: z.object({ tail: tailQuery }),
      produces: 'text/event-stream',
      errors: [404],
      handler: (ctx) => logStream(logs, ctx.params.name, ctx.params.dagRunId, RUN_LOG, ctx.query.tail, ctx),
    }),
    defineRoute({
      method: 'get',
      path: '/events/dag-runs/{name}/{dagRunId}/steps/{stepName}/log',
      operationId: 'streamStepLog',
      permission: 'dags:read',
      summary: "Server-sent events: a step's stdout (or `stream=stderr`) as it grows, as the run log's stream",
      tag: 'dag-runs',
      response: textBody,
      params: z.object({ name: z.string().min(1), dagRunId: z.string().min(1), stepName: z.string().min(1) }),
      query: z.object({ stream: z.enum(['stdout', 'stderr']).default('stdout'), tail: tailQuery }),
      produces: 'text/event-stream',
      errors: [404],
      handler: (ctx) => logStream(logs, ctx.params.name, ctx.params.dagRunId, { step: ctx.params.stepName, stream: ctx.query.stream }, ctx.query.tail, ctx),
    }),
  ];
}
