import { z } from 'zod';
import { DAG_FILE_NAME, workspaceLabel } from '@trellis/core';
import { actorOf, defineRoute, JsonText, NO_CONTENT, reply, type AnyRoute } from '../http/routes.js';
import { PageCache } from '../http/page-cache.js';
import type { DagCommands } from '../definitions/dag-commands.js';
import type { DagQueries } from '../definitions/dag-queries.js';
import { paginationOf, paginationQuery } from './pagination.js';
import { workspaceNameSchema } from './profile.schemas.js';
import { dagDetailsResponseSchema, dagListSchema, dagSpecSchema, errorsOnlySchema, validationSchema } from './dag.schemas.js';
import { runDetailsResponseSchema, runSummarySchema } from './run.schemas.js';

export interface DagRoutesDeps {
  queries: DagQueries;
  commands: DagCommands;
}

const fileNameParam = z.object({ fileName: z.string().regex(DAG_FILE_NAME, 'Invalid DAG name format') });

const listQuery = paginationQuery.extend({
  name: z.string().optional(),
  labels: z.string().optional(),
  workspace: workspaceNameSchema.optional().describe('Only DAGs of this workspace (labelled workspace=<name>)'),
  sort: z.enum(['name', 'nextRun']).default('name'),
  order: z.enum(['asc', 'desc']).default('asc'),
});

function listRunsOfDag({ queries }: DagRoutesDeps): AnyRoute {
  return defineRoute({
    method: 'get',
    path: '/dags/{fileName}/dag-runs',
    operationId: 'listRunsOfDag',

    permission: 'dags:read',
    summary: 'Recent runs of a DAG, with a status grid per step',
    tag: 'dags',
    response: z.object({ dagRuns: z.array(runSummarySchema), gridData: z.array(z.object({ name: z.string(), history: z.array(z.number().int()) })) }),
    params: fileNameParam,
    errors: [404],
    handler: ({ params }) => queries.runHistory(params.fileName),
  });
}

function getRunOfDag({ queries }: DagRoutesDeps): AnyRoute {
  return defineRoute({
    method: 'get',
    path: '/dags/{fileName}/dag-runs/{dagRunId}',
    operationId: 'getRunOfDag',

    permission: 'dags:read',
    summary: 'One run of a DAG, with its nodes',
    tag: 'dags',
    response: runDetailsResponseSchema,
    params: fileNameParam.extend({ dagRunId: z.string().min(1) }),
    errors: [404],
    handler: async ({ params }) => ({ dagRun: await queries.runOf(params.fileName, params.dagRunId) }),
  });
}

function stopAllRunsOfDag({ commands }: DagRoutesDeps): AnyRoute {
  return defineRoute({
    method: 'post',
    path: '/dags/{fileName}/stop-all',
    operationId: 'stopAllRunsOfDag',

    permission: 'dags:run',
    summary: 'Stop every running, waiting or queued run of a DAG',
    tag: 'dags',
    response: errorsOnlySchema,
    params: fileNameParam,
    errors: [404],
    handler: (ctx) => commands.stopAllRuns(actorOf(ctx), ctx.params.fileName),
  });
}

function suspendDag({ commands }: DagRoutesDeps): AnyRoute {
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
    handler: (ctx) => commands.suspend(actorOf(ctx), ctx.params.fileName, ctx.body.suspend),
  });
}

function listDags({ queries }: DagRoutesDeps): AnyRoute {
  const pages = new PageCache();
  return defineRoute({
    method: 'get',
    path: '/dags',
    operationId: 'listDags',

    permission: 'dags:read',
    summary: 'List DAG definitions, paged, filtered by name and labels',
    tag: 'dags',
    response: dagListSchema,
    query: listQuery,
    shareAnswers: true,
    handler: async ({ query }) => {
      const labels = [query.labels, query.workspace !== undefined ? workspaceLabel(query.workspace) : undefined].filter((l) => l !== undefined).join(',');
      const items = await queries.list({ ...query, labels });
      const text = (): string => `{"dags":${items.text()},"errors":[],"pagination":${JSON.stringify(paginationOf(items.total, query.page, query.perPage))}}`;
      return new JsonText(pages.body(JSON.stringify(query), { parts: items.parts, text }));
    },
  });
}

function createDag({ commands }: DagRoutesDeps): AnyRoute {
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
    handler: (ctx) => commands.create(actorOf(ctx), ctx.body.name, ctx.body.spec),
  });
}

function getDag({ queries }: DagRoutesDeps): AnyRoute {
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
    handler: ({ params }) => queries.details(params.fileName),
  });
}

function deleteDag({ commands }: DagRoutesDeps): AnyRoute {
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
    handler: (ctx) => commands.remove(actorOf(ctx), ctx.params.fileName),
  });
}

function getDagSpec({ queries }: DagRoutesDeps): AnyRoute {
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
    handler: ({ params }) => queries.spec(params.fileName),
  });
}

function updateDagSpec({ commands }: DagRoutesDeps): AnyRoute {
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
    handler: (ctx) => commands.updateSpec(actorOf(ctx), ctx.params.fileName, ctx.body.spec),
  });
}

function validateDagSpec({ queries }: DagRoutesDeps): AnyRoute {
  return defineRoute({
    method: 'post',
    path: '/dags/validate',
    operationId: 'validateDagSpec',

    permission: 'dags:read',
    summary: 'Validate a spec without storing it (always 200); warnings name settings that will not take effect',
    tag: 'dags',
    response: validationSchema,
    body: z.object({ spec: z.string({ error: 'spec is required' }), name: z.string().optional() }),
    handler: ({ body }) => Promise.resolve(queries.validate(body.spec, body.name)),
  });
}

function renameDag({ commands }: DagRoutesDeps): AnyRoute {
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
    handler: async (ctx) => reply(200, await commands.rename(actorOf(ctx), ctx.params.fileName, ctx.body.newFileName)),
  });
}

export function dagRoutes(deps: DagRoutesDeps): AnyRoute[] {
  return [listRunsOfDag(deps), getRunOfDag(deps), stopAllRunsOfDag(deps), suspendDag(deps), listDags(deps), createDag(deps), getDag(deps), deleteDag(deps), getDagSpec(deps), updateDagSpec(deps), validateDagSpec(deps), renameDag(deps)];
}
