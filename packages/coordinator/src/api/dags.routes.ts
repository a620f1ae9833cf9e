import { z } from 'zod';
import {
  isValidDagFileName,
  loadDag,
  toDagDetail,
  toDagListItemDag,
  type DagListItemPayload,
} from '@trellis/core';
import { getLatestRuns, getNodes, listRuns, setSuspended, suspendedAmong, type Db, type RunRecord } from '@trellis/store';
import { AlreadyExistsError, BadRequestError, NotFoundError } from '../errors/api-errors.js';
import { runDetails, runSummary } from '../runs/payloads.js';
import type { RunService } from '../runs/run-service.js';
import { toError } from '../errors/normalize.js';
import { defineRoute, NO_CONTENT, reply, type AnyRoute } from '../http/routes.js';
import type { DagFiles } from '../definitions/dag-files.js';
import type { DagIndex, IndexedDag } from '../definitions/dag-index.js';
import { paginate, paginationQuery } from './pagination.js';
import { dagDetailsResponseSchema, dagListSchema, dagSearchSchema, dagSpecSchema, errorsOnlySchema, validationSchema } from './dag.schemas.js';
import { runDetailsResponseSchema, runSummarySchema } from './run.schemas.js';

export interface DagRoutesDeps {
  db: Db;
  runs: RunService;
  files: DagFiles;
  index: DagIndex;
  /** The scheduler's view: next runs (pending one-offs included, suspended DAGs none) and suspension changes. */
  schedule: { nextRun(entry: IndexedDag): string; setSuspended(name: string, suspended: boolean): void };
}

const fileNameParam = z.object({ fileName: z.string().regex(/^[a-zA-Z0-9_-]+$/, 'Invalid DAG name format') });

/** The DAG created when POST /dags carries no spec: one step that echoes. */
const MINIMAL_SPEC = 'steps:\n  - name: step1\n    command: echo hello\n';

function emptyListItem(fileName: string): DagListItemPayload {
  return { name: fileName, group: '', schedule: [], description: '', params: [], defaultParams: '', labels: [] };
}

function nextRunOf(entry: IndexedDag, deps: DagRoutesDeps): string {
  return deps.schedule.nextRun(entry);
}

function listItem(entry: IndexedDag, deps: DagRoutesDeps, latest?: RunRecord, suspended = false) {
  return {
    fileName: entry.fileName,
    dag: entry.result.dag !== undefined ? toDagListItemDag(entry.result.dag) : emptyListItem(entry.fileName),
    nextRun: nextRunOf(entry, deps),
    latestDAGRun: latest !== undefined ? runSummary(latest) : null,
    suspended,
    errors: entry.result.errors,
  };
}

function detailOf(entry: IndexedDag, latest?: RunRecord, suspended = false) {
  return {
    dag: entry.result.dag !== undefined ? toDagDetail(entry.result.dag) : { ...emptyListItem(entry.fileName) },
    localDags: entry.result.localDags.map((local) => ({ name: local.name, dag: local.dag !== undefined ? toDagDetail(local.dag) : null, errors: local.errors })),
    latestDAGRun: latest !== undefined ? runSummary(latest) : null,
    suspended,
    errors: entry.result.errors,
  };
}

function requireDag(deps: DagRoutesDeps, fileName: string): IndexedDag {
  const entry = deps.index.get(fileName);
  if (entry === undefined) throw new NotFoundError('DAG not found', { fileName });
  return entry;
}

function matchesFilters(entry: IndexedDag, name: string | undefined, labels: string[]): boolean {
  if (name !== undefined && name !== '') {
    const needle = name.toLowerCase();
    if (!entry.fileName.toLowerCase().includes(needle) && !entry.name.toLowerCase().includes(needle)) return false;
  }
  if (labels.length === 0) return true;
  const own = new Set(entry.result.dag?.labels ?? []);
  return labels.every((label) => own.has(label));
}

/** Orders like String#localeCompare without arguments, but builds the collator once, not per comparison. */
const collator = new Intl.Collator();

/**
 * Definitions in list order. Each sort key is computed once per entry (a schedule's next run
 * is a cron search), and only the requested page becomes list items: with 1,000 DAGs, building
 * every item and comparing with localeCompare dominated the request.
 */
function sortedEntries(entries: IndexedDag[], sort: 'name' | 'nextRun', deps: DagRoutesDeps): IndexedDag[] {
  const keyOf = sort === 'name' ? (e: IndexedDag) => e.name.toLowerCase() : (e: IndexedDag) => nextRunOf(e, deps) || '\uffff';
  return entries
    .map((entry) => ({ entry, key: keyOf(entry) }))
    .sort((a, b) => collator.compare(a.key, b.key) || collator.compare(a.entry.fileName, b.entry.fileName))
    .map((ranked) => ranked.entry);
}

const listQuery = paginationQuery.extend({
  name: z.string().optional(),
  labels: z.string().optional(),
  sort: z.enum(['name', 'nextRun']).default('name'),
  order: z.enum(['asc', 'desc']).default('asc'),
});

function listDags(deps: DagRoutesDeps): AnyRoute {
  return defineRoute({
    method: 'get',
    path: '/dags',
    operationId: 'listDags',
    permission: 'dags:read',
    summary: 'List DAG definitions, paged, filtered by name and labels',
    tag: 'dags',
    response: dagListSchema,
    query: listQuery,
    handler: async ({ query }) => {
      const labels = (query.labels ?? '').split(',').map((l) => l.trim()).filter((l) => l.length > 0);
      const entries = sortedEntries(deps.index.all().filter((e) => matchesFilters(e, query.name, labels)), query.sort, deps);
      if (query.order === 'desc') entries.reverse();
      const { slice, pagination } = paginate(entries, query.page, query.perPage);
      const names = slice.map((e) => e.name);
      const [latest, suspended] = await Promise.all([getLatestRuns(deps.db, names), suspendedAmong(deps.db, names)]);
      return {
        dags: slice.map((e) => listItem(e, deps, latest.get(e.name), suspended.has(e.name))),
        errors: [],
        pagination,
      };
    },
  });
}

function createDag(deps: DagRoutesDeps): AnyRoute {
  return defineRoute({
    method: 'post',
    path: '/dags',
    operationId: 'createDag',
    permission: 'dags:write',
    summary: 'Create a DAG definition (a minimal one-step DAG without a spec)',
    tag: 'dags',
    response: z.object({ name: z.string() }),
    body: z.object({ name: z.string({ error: 'Name is required' }), spec: z.string().optional() }),
    successStatus: 201,
    errors: [409],
    handler: async ({ body }) => {
      if (!isValidDagFileName(body.name)) throw new BadRequestError('Invalid DAG name format', { name: body.name });
      const spec = body.spec ?? MINIMAL_SPEC;
      const { errors } = loadDag(spec, { fileName: body.name });
      if (errors.length > 0) throw new BadRequestError(`invalid spec: ${errors.join('; ')}`, { errors });
      if (!(await deps.files.create(body.name, spec))) throw new AlreadyExistsError('DAG already exists', { name: body.name });
      await deps.index.refresh(body.name);
      return { name: body.name };
    },
  });
}

function getDag(deps: DagRoutesDeps): AnyRoute {
  return defineRoute({
    method: 'get',
    path: '/dags/{fileName}',
    operationId: 'getDag',
    permission: 'dags:read',
    summary: 'A DAG definition in detail, with its local DAGs and problems',
    tag: 'dags',
    response: dagDetailsResponseSchema,
    params: fileNameParam,
    errors: [404],
    handler: async ({ params }) => {
      const entry = requireDag(deps, params.fileName);
      const [latest, suspended] = await Promise.all([getLatestRuns(deps.db, [entry.name]), suspendedAmong(deps.db, [entry.name])]);
      return detailOf(entry, latest.get(entry.name), suspended.has(entry.name));
    },
  });
}

function deleteDag(deps: DagRoutesDeps): AnyRoute {
  return defineRoute({
    method: 'delete',
    path: '/dags/{fileName}',
    operationId: 'deleteDag',
    permission: 'dags:write',
    summary: 'Delete a DAG definition',
    tag: 'dags',
    response: NO_CONTENT,
    params: fileNameParam,
    successStatus: 204,
    errors: [404],
    handler: async ({ params }) => {
      if (!(await deps.files.remove(params.fileName))) throw new NotFoundError('DAG not found', { fileName: params.fileName });
      await deps.index.refresh(params.fileName);
      return undefined;
    },
  });
}

function getSpec(deps: DagRoutesDeps): AnyRoute {
  return defineRoute({
    method: 'get',
    path: '/dags/{fileName}/spec',
    operationId: 'getDagSpec',
    permission: 'dags:read',
    summary: 'The YAML text of a DAG definition',
    tag: 'dags',
    response: dagSpecSchema,
    params: fileNameParam,
    errors: [404],
    handler: ({ params }) => {
      const entry = requireDag(deps, params.fileName);
      return Promise.resolve({ dag: detailOf(entry).dag, spec: entry.text, errors: entry.result.errors });
    },
  });
}

function putSpec(deps: DagRoutesDeps): AnyRoute {
  return defineRoute({
    method: 'put',
    path: '/dags/{fileName}/spec',
    operationId: 'updateDagSpec',
    permission: 'dags:write',
    summary: 'Replace the YAML of a DAG; an invalid spec is not stored and its problems come back in a 200',
    tag: 'dags',
    response: errorsOnlySchema,
    params: fileNameParam,
    body: z.object({ spec: z.string({ error: 'spec is required' }) }),
    errors: [404],
    handler: async ({ params, body }) => {
      requireDag(deps, params.fileName);
      const { errors } = deps.index.parse(body.spec, params.fileName);
      if (errors.length > 0) return { errors };
      await deps.files.write(params.fileName, body.spec);
      await deps.index.refresh(params.fileName);
      return { errors: [] };
    },
  });
}

function validateSpec(deps: DagRoutesDeps): AnyRoute {
  return defineRoute({
    method: 'post',
    path: '/dags/validate',
    operationId: 'validateDagSpec',
    permission: 'dags:read',
    summary: 'Validate a spec without storing it (always 200); warnings name settings that will not take effect',
    tag: 'dags',
    response: validationSchema,
    body: z.object({ spec: z.string({ error: 'spec is required' }), name: z.string().optional() }),
    handler: ({ body }) => {
      const result = deps.index.parse(body.spec, body.name ?? 'dag');
      return Promise.resolve({
        valid: result.errors.length === 0,
        errors: result.errors,
        warnings: result.warnings,
        ...(result.dag !== undefined ? { dag: toDagDetail(result.dag) } : {}),
      });
    },
  });
}

function renameDag(deps: DagRoutesDeps): AnyRoute {
  return defineRoute({
    method: 'post',
    path: '/dags/{fileName}/rename',
    operationId: 'renameDag',
    permission: 'dags:write',
    summary: 'Rename a DAG definition file',
    tag: 'dags',
    response: z.object({ fileName: z.string() }),
    params: fileNameParam,
    body: z.object({ newFileName: z.string({ error: 'newFileName is required' }) }),
    errors: [404, 409],
    handler: async ({ params, body }) => {
      if (!isValidDagFileName(body.newFileName)) throw new BadRequestError('Invalid new file name format', { newFileName: body.newFileName });
      requireDag(deps, params.fileName);
      if ((await deps.files.pathOf(body.newFileName)) !== undefined) throw new AlreadyExistsError('a DAG with that file name already exists', { newFileName: body.newFileName });
      await deps.files.rename(params.fileName, body.newFileName);
      await Promise.all([deps.index.refresh(params.fileName), deps.index.refresh(body.newFileName)]);
      return reply(200, { fileName: body.newFileName });
    },
  });
}

const MAX_SEARCH_MATCHES = 20;

function searchDags(deps: DagRoutesDeps): AnyRoute {
  return defineRoute({
    method: 'get',
    path: '/dags/search',
    operationId: 'searchDags',
    permission: 'dags:read',
    summary: 'Full-text search over DAG specs (legacy)',
    tag: 'dags',
    response: dagSearchSchema,
    query: z.object({ q: z.string({ error: 'q is required' }).min(1, 'q is required') }),
    handler: ({ query }) => {
      const needle = query.q.toLowerCase();
      const results = deps.index
        .all()
        .map((entry) => {
          const lines = entry.text.split('\n');
          const matches = lines
            .map((line, i) => ({ line, lineNumber: i + 1, startLine: i + 1 }))
            .filter((m) => m.line.toLowerCase().includes(needle))
            .slice(0, MAX_SEARCH_MATCHES);
          return { name: entry.name, fileName: entry.fileName, dag: listItem(entry, deps).dag, matches };
        })
        .filter((r) => r.matches.length > 0)
        .sort((a, b) => a.fileName.localeCompare(b.fileName));
      return Promise.resolve({ results, errors: [] });
    },
  });
}

/** How many recent runs the per-DAG history and its grid show. */
const HISTORY_RUNS = 30;

function dagRunRoutes(deps: DagRoutesDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/dags/{fileName}/dag-runs',
      operationId: 'listRunsOfDag',
      permission: 'dags:read',
      summary: 'Recent runs of a DAG, with a status grid per step',
      tag: 'dags',
      response: z.object({ dagRuns: z.array(runSummarySchema), gridData: z.array(z.object({ name: z.string(), history: z.array(z.number().int()) })) }),
      params: fileNameParam,
      errors: [404],
      handler: async ({ params }) => {
        const entry = requireDag(deps, params.fileName);
        const { runs } = await listRuns(deps.db, { name: entry.name, limit: HISTORY_RUNS });
        const nodesByRun = await Promise.all(runs.map((r) => getNodes(deps.db, r.id)));
        const steps = entry.result.dag?.steps.map((s) => s.name) ?? [];
        const gridData = steps.map((name) => ({
          name,
          history: nodesByRun.map((nodes) => (nodes.find((n) => n.kind === 'step' && n.stepName === name)?.data as { status?: number } | undefined)?.status ?? 0),
        }));
        return { dagRuns: runs.map((r) => runSummary(r)), gridData };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/dags/{fileName}/dag-runs/{dagRunId}',
      operationId: 'getRunOfDag',
      permission: 'dags:read',
      summary: 'One run of a DAG, with its nodes',
      tag: 'dags',
      response: runDetailsResponseSchema,
      params: fileNameParam.extend({ dagRunId: z.string().min(1) }),
      errors: [404],
      handler: async ({ params }) => {
        const entry = requireDag(deps, params.fileName);
        const run = await deps.runs.require(entry.name, params.dagRunId);
        return { dagRun: runDetails(run, await getNodes(deps.db, run.id), await deps.runs.conditionsFor(run)) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/dags/{fileName}/stop-all',
      operationId: 'stopAllRunsOfDag',
      permission: 'dags:run',
      summary: 'Stop every running, waiting or queued run of a DAG',
      tag: 'dags',
      response: errorsOnlySchema,
      params: fileNameParam,
      errors: [404],
      handler: async ({ params }) => {
        const entry = requireDag(deps, params.fileName);
        const errors: string[] = [];
        for (const status of [1, 5, 7] as const) {
          let cursor: string | undefined;
          do {
            const page = await listRuns(deps.db, { name: entry.name, status, limit: 500, ...(cursor !== undefined ? { cursor } : {}) });
            for (const run of page.runs) await deps.runs.stop(run).catch((error: unknown) => errors.push(`${run.dagRunId}: ${toError(error).message}`));
            cursor = page.nextCursor;
          } while (cursor !== undefined);
        }
        return { errors };
      },
    }),
  ];
}

function suspendDag(deps: DagRoutesDeps): AnyRoute {
  return defineRoute({
    method: 'post',
    path: '/dags/{fileName}/suspend',
    operationId: 'suspendDag',
    permission: 'dags:run',
    summary: 'Suspend or resume a DAG: a suspended DAG is not scheduled (manual runs still work)',
    tag: 'dags',
    response: z.object({ suspended: z.boolean() }),
    params: fileNameParam,
    body: z.object({ suspend: z.boolean({ error: 'suspend (true or false) is required' }) }),
    errors: [404],
    handler: async ({ params, body }) => {
      const entry = requireDag(deps, params.fileName);
      await setSuspended(deps.db, entry.name, body.suspend);
      deps.schedule.setSuspended(entry.name, body.suspend);
      return { suspended: body.suspend };
    },
  });
}

export function dagRoutes(deps: DagRoutesDeps): AnyRoute[] {
  return [...dagRunRoutes(deps), suspendDag(deps), listDags(deps), createDag(deps), getDag(deps), deleteDag(deps), getSpec(deps), putSpec(deps), validateSpec(deps), renameDag(deps), searchDags(deps)];
}
