import { z } from 'zod';
import { BadRequestError, DAG_FILE_NAME, RunStatus, isNodeStatus, workspaceLabel } from '@trellis/core';
import { actorOf, defineRoute, JsonText, type AnyRoute } from '../http/routes.js';
import { unixSecondsQuery } from '../http/timestamps.js';
import { PageCache } from '../http/page-cache.js';
import type { RunCommands, StartOptions } from '../runs/run-commands.js';
import type { RunListFilter, RunQueries } from '../runs/run-queries.js';
import type { LogWindow } from '../logs/log-pager.js';
import { profileHeaders, profileNameSchema, workspaceNameSchema } from './profile.schemas.js';
import { dagRunIdSchema, emptyBody, logLinesQuery, logPageSchema, runDetailsResponseSchema, runListSchema, runOutputsSchema, startSyncTimeoutSchema } from './run.schemas.js';

export interface RunRoutesDeps {
  commands: RunCommands;
  queries: RunQueries;
}

const fileNameParam = z.object({ fileName: z.string().regex(DAG_FILE_NAME, 'Invalid DAG name format') });
const runParams = z.object({ name: z.string().min(1), dagRunId: z.string().min(1) });
const stepParams = runParams.extend({ stepName: z.string().min(1) });

const startFields = {
  params: z.string().optional(),
  dagRunId: z.string().optional(),
  dagName: z.string().optional(),
  noReuse: z.boolean().optional(),
  profileName: profileNameSchema
    .optional()
    .describe(
      'Runtime profile to run with (or the X-Svc-Profile header; both naming different profiles is a 400): its variables and secrets (over the Global and workspace defaults) become env vars of the steps, secrets masked. Without either, the configured default profile, if any. 404 when it does not exist, 400 when disabled, 403 when protected and the caller is not an admin.',
    ),
};

/**
 * A start's options: its body, with the profile it names in `profileName` or the `X-Svc-Profile`
 * header (either, or both when they agree).
 */
function startOptions(ctx: { body: StartOptions; headers: z.output<typeof profileHeaders> }): StartOptions {
  const header = ctx.headers['X-Svc-Profile'];
  const named = ctx.body.profileName;
  if (header !== undefined && named !== undefined && header !== named) {
    throw new BadRequestError(`the X-Svc-Profile header (${header}) and body.profileName (${named}) name different profiles: name one`, { header, profileName: named });
  }
  return { ...ctx.body, profileName: named ?? header };
}

function startingRoutes(deps: RunRoutesDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/dags/{fileName}/start',
      operationId: 'startDag',
      permission: 'dags:run',
      summary: 'Start a run of a stored DAG',
      tag: 'runs',
      response: dagRunIdSchema,
      params: fileNameParam,
      body: z.object({ ...startFields, singleton: z.boolean().optional() }),
      headers: profileHeaders,
      errors: [404, 409],
      handler: async (ctx) => ({ dagRunId: (await deps.commands.startStored(actorOf(ctx), ctx.params.fileName, startOptions(ctx))).dagRunId }),
    }),
    defineRoute({
      method: 'post',
      path: '/dags/{fileName}/enqueue',
      operationId: 'enqueueDag',
      permission: 'dags:run',
      summary: 'Queue a run of a stored DAG (optionally on another queue)',
      tag: 'runs',
      response: dagRunIdSchema,
      params: fileNameParam,
      body: z.object({ ...startFields, queue: z.string().optional() }),
      headers: profileHeaders,
      errors: [404, 409],
      handler: async (ctx) => ({ dagRunId: (await deps.commands.startStored(actorOf(ctx), ctx.params.fileName, startOptions(ctx), 'enqueue')).dagRunId }),
    }),
    defineRoute({
      method: 'post',
      path: '/dags/{fileName}/start-sync',
      operationId: 'startDagSync',
      permission: 'dags:run',
      summary: 'Deprecated: start a run and wait until it ends or waits (408 with dagRunId when the wait ends first)',
      tag: 'runs',
      response: runDetailsResponseSchema,
      deprecated: true,
      params: fileNameParam,
      body: z.object({ ...startFields, singleton: z.boolean().optional(), timeout: z.number().int().min(1).max(86400) }),
      headers: profileHeaders,
      errors: [404, 409],
      errorBodies: { 408: startSyncTimeoutSchema },
      handler: async (ctx) => ({ dagRun: await deps.commands.startSync(actorOf(ctx), ctx.params.fileName, startOptions(ctx), ctx.body.timeout) }),
    }),
    defineRoute({
      method: 'post',
      path: '/dag-runs',
      operationId: 'startInlineRun',
      permission: 'dags:write',
      summary: 'Start a run of an inline spec (never stored as a definition)',
      tag: 'runs',
      response: dagRunIdSchema,
      body: z.object({ spec: z.string({ error: 'spec is required' }).min(1, 'spec is required'), name: z.string().optional(), ...startFields, singleton: z.boolean().optional() }),
      headers: profileHeaders,
      errors: [404, 409],
      handler: async (ctx) => ({ dagRunId: (await deps.commands.startInline(actorOf(ctx), ctx.body.spec, ctx.body.name, startOptions(ctx))).dagRunId }),
    }),
    defineRoute({
      method: 'post',
      path: '/dag-runs/enqueue',
      operationId: 'enqueueInlineRun',
      permission: 'dags:write',
      summary: 'Queue a run of an inline spec',
      tag: 'runs',
      response: dagRunIdSchema,
      body: z.object({ spec: z.string({ error: 'spec is required' }).min(1, 'spec is required'), name: z.string().optional(), ...startFields, queue: z.string().optional() }),
      headers: profileHeaders,
      errors: [404, 409],
      handler: async (ctx) => ({ dagRunId: (await deps.commands.startInline(actorOf(ctx), ctx.body.spec, ctx.body.name, startOptions(ctx), 'enqueue')).dagRunId }),
    }),
  ];
}

const listQuery = z.object({
  name: z.string().optional(),
  status: z.coerce.number().int().min(0).max(8).optional(),
  fromDate: unixSecondsQuery.optional(),
  toDate: unixSecondsQuery.optional(),
  dagRunId: z.string().optional(),
  labels: z.string().optional(),
  workspace: workspaceNameSchema.optional().describe('Only runs of DAGs of this workspace (labelled workspace=<name>)'),
  limit: z.coerce.number().int().min(1, 'limit must be 1-500').max(500, 'limit must be 1-500').default(100),
  cursor: z.string().optional(),
});

/** The list query as the run list's filter. */
function listFilter(query: z.output<typeof listQuery>, name: string | undefined): RunListFilter {
  return {
    limit: query.limit,
    ...(name !== undefined ? { name } : {}),
    ...(query.status !== undefined ? { status: query.status as RunStatus } : {}),
    ...(query.fromDate !== undefined ? { from: new Date(query.fromDate * 1000) } : {}),
    ...(query.toDate !== undefined ? { to: new Date(query.toDate * 1000) } : {}),
    ...(query.dagRunId !== undefined ? { dagRunId: query.dagRunId } : {}),
    ...(query.labels !== undefined || query.workspace !== undefined
      ? { labels: [...(query.labels ?? '').split(',').map((l) => l.trim()).filter(Boolean), ...(query.workspace !== undefined ? [workspaceLabel(query.workspace)] : [])] }
      : {}),
    ...(query.cursor !== undefined ? { cursor: query.cursor } : {}),
  };
}

const logQuery = z.object({
  head: logLinesQuery.optional(),
  tail: logLinesQuery.optional(),
  offset: z.coerce.number().int().min(1).optional(),
  limit: z.coerce.number().int().min(1, 'limit must be 1-10000').max(10000, 'limit must be 1-10000').optional(),
  stream: z.enum(['stdout', 'stderr']).default('stdout'),
});

function logWindow(query: z.output<typeof logQuery>): LogWindow {
  if (query.tail !== undefined) return { kind: 'tail', lines: query.tail };
  if (query.head !== undefined) return { kind: 'head', lines: query.head };
  if (query.offset !== undefined) return { kind: 'range', offset: query.offset, limit: query.limit ?? 1000 };
  return { kind: 'tail', lines: query.limit ?? 1000 };
}

function managementRoutes(deps: RunRoutesDeps): AnyRoute[] {
  const pages = new PageCache();
  const listPage = async (filter: RunListFilter): Promise<JsonText> => new JsonText(pages.body(JSON.stringify(filter), await deps.queries.list(filter)));
  return [
    defineRoute({
      method: 'get',
      path: '/dag-runs',
      operationId: 'listDagRuns',
      permission: 'dags:read',
      summary: 'Runs, newest first, with a forward-only cursor',
      tag: 'runs',
      response: runListSchema,
      query: listQuery,
      shareAnswers: true,
      handler: ({ query }) => listPage(listFilter(query, query.name)),
    }),
    defineRoute({
      method: 'get',
      path: '/dag-runs/{name}',
      operationId: 'listDagRunsByName',
      permission: 'dags:read',
      summary: 'Runs of one DAG, newest first',
      tag: 'runs',
      response: runListSchema,
      params: z.object({ name: z.string().min(1) }),
      query: listQuery,
      shareAnswers: true,
      handler: ({ params, query }) => listPage(listFilter(query, params.name)),
    }),
    defineRoute({
      method: 'get',
      path: '/dag-runs/{name}/{dagRunId}',
      operationId: 'getDagRun',
      permission: 'dags:read',
      summary: 'A run with its nodes (dagRunId may be "latest"); queued runs carry conditions',
      tag: 'runs',
      response: runDetailsResponseSchema,
      params: runParams,
      errors: [404],
      handler: async ({ params }) => ({ dagRun: await deps.queries.details(params.name, params.dagRunId) }),
    }),
    defineRoute({
      method: 'post',
      path: '/dag-runs/{name}/{dagRunId}/stop',
      operationId: 'stopDagRun',
      permission: 'dags:run',
      summary: 'Stop a run (a queued one leaves the queue)',
      tag: 'runs',
      response: emptyBody,
      params: runParams,
      errors: [404],
      handler: async (ctx) => {
        await deps.commands.stop(actorOf(ctx), ctx.params.name, ctx.params.dagRunId);
        return {};
      },
    }),
    defineRoute({
      method: 'post',
      path: '/dag-runs/{name}/{dagRunId}/retry',
      operationId: 'retryDagRun',
      permission: 'dags:run',
      summary: 'Retry a finished run: a new attempt, or a new run when another dagRunId is given',
      tag: 'runs',
      response: dagRunIdSchema,
      params: runParams,
      body: z.object({ dagRunId: z.string().optional() }),
      errors: [404],
      handler: async (ctx) => {
        const run = await deps.commands.retry(actorOf(ctx), ctx.params.name, ctx.params.dagRunId, ctx.body.dagRunId);
        return { dagRunId: run.dagRunId };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/dag-runs/{name}/{dagRunId}/reschedule',
      operationId: 'rescheduleDagRun',
      permission: 'dags:run',
      summary: 'Queue a new run with the definition and params of an existing one (refused while the DAG is active)',
      tag: 'runs',
      response: z.object({ dagRunId: z.string(), queued: z.boolean() }),
      params: runParams,
      body: z.object({ dagRunId: z.string().optional(), dagName: z.string().optional() }),
      errors: [404, 409],
      handler: async (ctx) => {
        const run = await deps.commands.reschedule(actorOf(ctx), ctx.params.name, ctx.params.dagRunId, ctx.body.dagRunId, ctx.body.dagName);
        return { dagRunId: run.dagRunId, queued: run.status === RunStatus.Queued };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/dag-runs/{name}/{dagRunId}/dequeue',
      operationId: 'dequeueDagRun',
      permission: 'dags:run',
      summary: 'Take a queued run out of its queue',
      tag: 'runs',
      response: emptyBody,
      params: runParams,
      errors: [404],
      handler: async (ctx) => {
        await deps.commands.dequeue(actorOf(ctx), ctx.params.name, ctx.params.dagRunId);
        return {};
      },
    }),
    defineRoute({
      method: 'get',
      path: '/dag-runs/{name}/{dagRunId}/log',
      operationId: 'getDagRunLog',
      permission: 'dags:read',
      summary: 'A page of the run log (head, tail, or offset/limit)',
      tag: 'runs',
      response: logPageSchema,
      params: runParams,
      query: logQuery,
      errors: [404],
      handler: ({ params, query }) => deps.queries.log(params.name, params.dagRunId, logWindow(query)),
    }),
    defineRoute({
      method: 'get',
      path: '/dag-runs/{name}/{dagRunId}/steps/{stepName}/log',
      operationId: 'getStepLog',
      permission: 'dags:read',
      summary: "A page of a step's stdout or stderr",
      tag: 'runs',
      response: logPageSchema,
      params: stepParams,
      query: logQuery,
      errors: [404],
      handler: ({ params, query }) => deps.queries.stepLog(params.name, params.dagRunId, params.stepName, query.stream, logWindow(query)),
    }),
    defineRoute({
      method: 'get',
      path: '/dag-runs/{name}/{dagRunId}/outputs',
      operationId: 'getDagRunOutputs',
      permission: 'dags:read',
      summary: 'Collected outputs of a finished run (dagRunId may be "latest")',
      tag: 'runs',
      response: runOutputsSchema,
      params: runParams,
      errors: [404],
      handler: ({ params }) => deps.queries.outputs(params.name, params.dagRunId),
    }),
    defineRoute({
      method: 'patch',
      path: '/dag-runs/{name}/{dagRunId}/steps/{stepName}/status',
      operationId: 'setStepStatus',
      permission: 'dags:run',
      summary: 'Set a step status by hand (0-5) on a run that is not running',
      tag: 'runs',
      response: emptyBody,
      params: stepParams,
      body: z.object({ status: z.number().int().refine(isNodeStatus, 'status must be 0-5') }),
      errors: [404],
      handler: async (ctx) => {
        await deps.commands.setStepStatus(actorOf(ctx), ctx.params.name, ctx.params.dagRunId, ctx.params.stepName, ctx.body.status);
        return {};
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/dag-runs/{name}/{dagRunId}/sub-dag-runs/{subDagRunId}/steps/{stepName}/status',
      operationId: 'setSubRunStepStatus',
      permission: 'dags:run',
      summary: 'Set a step status by hand on a sub-DAG run of this run',
      tag: 'runs',
      response: emptyBody,
      params: stepParams.extend({ subDagRunId: z.string().min(1) }),
      body: z.object({ status: z.number().int().refine(isNodeStatus, 'status must be 0-5') }),
      errors: [404],
      handler: async (ctx) => {
        const { params, body } = ctx;
        await deps.commands.setSubRunStepStatus(actorOf(ctx), params.name, params.dagRunId, params.subDagRunId, params.stepName, body.status);
        return {};
      },
    }),
    ...approvalRoutes(deps),
  ];
}

function approvalRoutes(deps: RunRoutesDeps): AnyRoute[] {
  const decide = (action: 'approve' | 'reject') =>
    defineRoute({
      method: 'post',
      path: `/dag-runs/{name}/{dagRunId}/steps/{stepName}/${action}`,
      operationId: action === 'approve' ? 'approveStep' : 'rejectStep',
      permission: 'dags:run',
      summary: action === 'approve' ? 'Approve a step waiting for approval, with its inputs' : 'Reject a step waiting for approval',
      tag: 'runs',
      response: emptyBody,
      params: stepParams,
      body: z.object({ inputs: z.record(z.string(), z.string()).optional(), reason: z.string().optional() }),
      errors: [404],
      handler: async (ctx) => {
        const { params, body } = ctx;
        await deps.commands.decide(actorOf(ctx), params.name, params.dagRunId, params.stepName, { action, inputs: body.inputs ?? {}, reason: body.reason ?? '' });
        return {};
      },
    });
  return [decide('approve'), decide('reject')];
}

export function runRoutes(deps: RunRoutesDeps): AnyRoute[] {
  return [...startingRoutes(deps), ...managementRoutes(deps)];
}
