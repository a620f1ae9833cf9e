import { dirname, resolve, sep } from 'node:path';
import { z } from 'zod';
import { RunStatus, isNodeStatus, type NodeStatus, isTerminalRunStatus, loadDag, nodeStatusLabel, isValidInlineRunName, type Dag } from '@trellis/core';
import { ApprovalError } from '@trellis/engine';
import { getLatestRun, getNodes, getOutputs, listRuns, queueRunCommand, setNodeData, InvalidCursorError, type Db, type RunRecord } from '@trellis/store';
import { BadRequestError, NotFoundError, TimeoutError } from '../errors/api-errors.js';
import { defineRoute, type AnyRoute } from '../http/routes.js';
import { unixSecondsQuery } from '../http/timestamps.js';
import type { DagIndex } from '../definitions/dag-index.js';
import type { RunService, StartRequest } from '../runs/run-service.js';
import type { LocalExecutor } from '../runs/local-executor.js';
import { runDetails, runSummary } from '../runs/payloads.js';
import { readLogPage, type LogWindow } from '../logs/log-pager.js';
import { dagRunIdSchema, emptyBody, logPageSchema, runDetailsResponseSchema, runListSchema, runOutputsSchema, startSyncTimeoutSchema } from './run.schemas.js';

export interface RunRoutesDeps {
  db: Db;
  index: DagIndex;
  runs: RunService;
  executor: LocalExecutor;
}

const fileNameParam = z.object({ fileName: z.string().regex(/^[a-zA-Z0-9_-]+$/, 'Invalid DAG name format') });
const runParams = z.object({ name: z.string().min(1), dagRunId: z.string().min(1) });
const stepParams = runParams.extend({ stepName: z.string().min(1) });

const startFields = {
  params: z.string().optional(),
  dagRunId: z.string().optional(),
  dagName: z.string().optional(),
  noReuse: z.boolean().optional(),
  profileName: z
    .string()
    .optional()
    .refine((name) => name === undefined, 'runtime profiles are not implemented yet: send no profileName')
    .describe('Runtime profile to use. Profiles are not implemented yet: any value is refused with 400 bad_request.'),
};

function storedDag(deps: RunRoutesDeps, fileName: string): { dag: Dag; yaml: string } {
  const entry = deps.index.get(fileName);
  if (entry === undefined) throw new NotFoundError('DAG not found', { fileName });
  if (entry.result.dag === undefined) throw new BadRequestError(`the DAG definition is invalid: ${entry.result.errors.join('; ')}`, { errors: entry.result.errors });
  return { dag: entry.result.dag, yaml: entry.text };
}

function inlineDag(spec: string, name: string | undefined): { dag: Dag; yaml: string } {
  if (name !== undefined && !isValidInlineRunName(name)) throw new BadRequestError('name must be at most 40 characters of [A-Za-z0-9_.-]', { name });
  const loaded = loadDag(spec, { fileName: name ?? 'inline' });
  if (loaded.dag === undefined) throw new BadRequestError(`invalid spec: ${loaded.errors.join('; ')}`, { errors: loaded.errors });
  return { dag: loaded.dag, yaml: spec };
}

function startRequest(base: { dag: Dag; yaml: string }, fileName: string, body: { params?: string | undefined; dagRunId?: string | undefined; dagName?: string | undefined; noReuse?: boolean | undefined }, trigger: string): StartRequest {
  const request: StartRequest = { yaml: base.yaml, fileName, dag: base.dag, trigger };
  if (body.params !== undefined) request.params = body.params;
  if (body.dagRunId !== undefined) request.dagRunId = body.dagRunId;
  if (body.dagName !== undefined) request.dagName = body.dagName;
  if (body.noReuse !== undefined) request.noReuse = body.noReuse;
  return request;
}

async function resolveRun(deps: RunRoutesDeps, name: string, dagRunId: string): Promise<RunRecord> {
  if (dagRunId === 'latest') {
    const run = await getLatestRun(deps.db, name);
    if (run === undefined) throw new NotFoundError('DAG run not found', { name, dagRunId });
    return run;
  }
  return deps.runs.require(name, dagRunId);
}

async function details(deps: RunRoutesDeps, run: RunRecord) {
  return runDetails(run, await getNodes(deps.db, run.id), await deps.runs.conditionsFor(run));
}

const SYNC_POLL_MS = 100;

async function waitForEnd(deps: RunRoutesDeps, run: RunRecord, timeoutSec: number): Promise<RunRecord> {
  const deadline = Date.now() + timeoutSec * 1000;
  for (;;) {
    const current = await deps.runs.require(run.dagName, run.dagRunId);
    if (isTerminalRunStatus(current.status) || current.status === RunStatus.Waiting) return current;
    if (Date.now() >= deadline) throw new TimeoutError(`the run did not finish within ${timeoutSec}s; it continues`, run.dagRunId);
    await new Promise((resolve) => setTimeout(resolve, SYNC_POLL_MS));
  }
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
      errors: [404, 409],
      handler: async ({ params, body }) => {
        const request = startRequest(storedDag(deps, params.fileName), params.fileName, body, 'manual');
        if (body.singleton === true) request.singleton = 'already_running';
        return { dagRunId: (await deps.runs.enqueue(request)).dagRunId };
      },
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
      errors: [404, 409],
      handler: async ({ params, body }) => {
        const request = startRequest(storedDag(deps, params.fileName), params.fileName, body, 'manual');
        if (body.queue !== undefined) request.queue = body.queue;
        return { dagRunId: (await deps.runs.enqueue(request)).dagRunId };
      },
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
      errors: [404, 409],
      errorBodies: { 408: startSyncTimeoutSchema },
      handler: async ({ params, body }) => {
        const request = startRequest(storedDag(deps, params.fileName), params.fileName, body, 'manual');
        if (body.singleton === true) request.singleton = 'already_running';
        const run = await deps.runs.enqueue(request);
        return { dagRun: await details(deps, await waitForEnd(deps, run, body.timeout)) };
      },
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
      errors: [409],
      handler: async ({ body }) => {
        const request = startRequest(inlineDag(body.spec, body.name), '', { ...body, dagName: body.dagName ?? body.name }, 'api');
        if (body.singleton === true) request.singleton = 'max_run_reached';
        return { dagRunId: (await deps.runs.enqueue(request)).dagRunId };
      },
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
      errors: [409],
      handler: async ({ body }) => {
        const request = startRequest(inlineDag(body.spec, body.name), '', { ...body, dagName: body.dagName ?? body.name }, 'api');
        if (body.queue !== undefined) request.queue = body.queue;
        return { dagRunId: (await deps.runs.enqueue(request)).dagRunId };
      },
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
  limit: z.coerce.number().int().min(1, 'limit must be 1-500').max(500, 'limit must be 1-500').default(100),
  cursor: z.string().optional(),
});

async function listPage(deps: RunRoutesDeps, query: z.output<typeof listQuery>, name: string | undefined) {
  try {
    const page = await listRuns(deps.db, {
      limit: query.limit,
      ...(name !== undefined ? { name } : {}),
      ...(query.status !== undefined ? { status: query.status as RunStatus } : {}),
      ...(query.fromDate !== undefined ? { from: new Date(query.fromDate * 1000) } : {}),
      ...(query.toDate !== undefined ? { to: new Date(query.toDate * 1000) } : {}),
      ...(query.dagRunId !== undefined ? { dagRunId: query.dagRunId } : {}),
      ...(query.labels !== undefined ? { labels: query.labels.split(',').map((l) => l.trim()).filter(Boolean) } : {}),
      ...(query.cursor !== undefined ? { cursor: query.cursor } : {}),
    });
    return { dagRuns: page.runs.map((r) => runSummary(r)), ...(page.nextCursor !== undefined ? { nextCursor: page.nextCursor } : {}) };
  } catch (error) {
    if (error instanceof InvalidCursorError) throw new BadRequestError('invalid cursor');
    throw error;
  }
}

const logQuery = z.object({
  head: z.coerce.number().int().min(1).max(10000).optional(),
  tail: z.coerce.number().int().min(1).max(10000).optional(),
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

interface NodeLogs {
  step?: { name?: string };
  stdout?: string;
  stderr?: string;
}

/** A step, or a handler by the step name the DAG detail gives it (`onSuccess`, `onExit`, or its own `name`). */
async function loggedNode(deps: RunRoutesDeps, run: RunRecord, stepName: string): Promise<NodeLogs> {
  const nodes = await getNodes(deps.db, run.id);
  const node = nodes.find((n) => n.kind === 'step' && n.stepName === stepName) ?? nodes.find((n) => n.kind === 'handler' && (n.data as NodeLogs).step?.name === stepName);
  if (node === undefined) throw new NotFoundError(`step ${stepName} not found in this run`, { stepName });
  return node.data as NodeLogs;
}

/** A node's log file, read only inside its run's log directory (a DAG's log_dir holds other runs too). */
function insideRunDir(run: RunRecord, path: string | undefined): string {
  if (path === undefined || path === '') return '';
  const runDir = dirname(resolve(run.logFile));
  return resolve(path).startsWith(runDir + sep) ? path : '';
}

async function stepNode(deps: RunRoutesDeps, run: RunRecord, stepName: string) {
  const node = (await getNodes(deps.db, run.id)).find((n) => n.kind === 'step' && n.stepName === stepName);
  if (node === undefined) throw new NotFoundError(`step ${stepName} not found in this run`, { stepName });
  return node;
}

function managementRoutes(deps: RunRoutesDeps): AnyRoute[] {
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
      handler: ({ query }) => listPage(deps, query, query.name),
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
      handler: ({ params, query }) => listPage(deps, query, params.name),
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
      handler: async ({ params }) => ({ dagRun: await details(deps, await resolveRun(deps, params.name, params.dagRunId)) }),
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
      handler: async ({ params }) => {
        await deps.runs.stop(await deps.runs.require(params.name, params.dagRunId));
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
      handler: async ({ params, body }) => {
        const run = await deps.runs.retry(await deps.runs.require(params.name, params.dagRunId), body.dagRunId);
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
      handler: async ({ params, body }) => {
        const run = await deps.runs.reschedule(await deps.runs.require(params.name, params.dagRunId), body.dagRunId, body.dagName);
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
      handler: async ({ params }) => {
        await deps.runs.dequeue(await deps.runs.require(params.name, params.dagRunId));
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
      handler: async ({ params, query }) => readLogPage((await resolveRun(deps, params.name, params.dagRunId)).logFile, logWindow(query)),
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
      handler: async ({ params, query }) => {
        const run = await resolveRun(deps, params.name, params.dagRunId);
        const data = await loggedNode(deps, run, params.stepName);
        return readLogPage(insideRunDir(run, query.stream === 'stderr' ? data.stderr : data.stdout), logWindow(query));
      },
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
      handler: async ({ params }) => {
        const run = await resolveRun(deps, params.name, params.dagRunId);
        const stored = await getOutputs(deps.db, run.id);
        return stored ?? { metadata: { dagName: '', dagRunId: '', attemptId: '', status: '', completedAt: '0001-01-01T00:00:00Z', params: '' }, outputs: {} };
      },
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
      handler: async ({ params, body }) => {
        await setStepStatus(deps, await resolveRun(deps, params.name, params.dagRunId), params.stepName, body.status);
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
      handler: async ({ params, body }) => {
        const root = await resolveRun(deps, params.name, params.dagRunId);
        const { runs } = await listRuns(deps.db, { dagRunId: params.subDagRunId, limit: 10 });
        const child = runs.find((r) => r.rootDagRunId === root.rootDagRunId && r.id !== root.id);
        if (child === undefined) throw new NotFoundError('sub-DAG run not found', { subDagRunId: params.subDagRunId });
        await setStepStatus(deps, child, params.stepName, body.status);
        return {};
      },
    }),
    ...approvalRoutes(deps),
  ];
}

async function setStepStatus(deps: RunRoutesDeps, run: RunRecord, stepName: string, status: number): Promise<void> {
  if (run.status === RunStatus.Running) throw new BadRequestError('the run is running: its steps cannot be changed by hand');
  const node = await stepNode(deps, run, stepName);
  await setNodeData(deps.db, run.id, stepName, { ...(node.data as object), status, statusLabel: nodeStatusLabel(status as NodeStatus) });
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
      handler: async ({ params, body }) => {
        const run = await resolveRun(deps, params.name, params.dagRunId);
        const handle = deps.executor.handle(run.id);
        if (handle === undefined && run.dispatchTarget === 'remote' && run.status === RunStatus.Waiting) {
          // The worker running it gets the decision with its next heartbeat, within a second.
          if (!(await getNodes(deps.db, run.id)).some((n) => n.kind === 'step' && n.stepName === params.stepName)) throw new NotFoundError(`no step ${params.stepName} in this run`);
          await queueRunCommand(deps.db, run.id, run.attemptId, { kind: action, stepName: params.stepName, inputs: body.inputs ?? {}, reason: body.reason ?? '' });
          return {};
        }
        if (handle === undefined) throw new BadRequestError('the run is not waiting for approval');
        try {
          if (action === 'approve') handle.approve(params.stepName, body.inputs ?? {});
          else handle.reject(params.stepName, body.reason ?? '');
        } catch (error) {
          if (error instanceof ApprovalError) throw new BadRequestError(error.message);
          throw error;
        }
        return {};
      },
    });
  return [decide('approve'), decide('reject')];
}

export function runRoutes(deps: RunRoutesDeps): AnyRoute[] {
  return [...startingRoutes(deps), ...managementRoutes(deps)];
}
