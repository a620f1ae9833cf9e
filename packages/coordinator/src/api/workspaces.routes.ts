import { z } from 'zod';
import type { WorkspaceService } from '../profiles/workspace-service.js';
import { actorOf, defineRoute, NO_CONTENT, type AnyRoute } from '../http/routes.js';
import { createWorkspaceBody, updateWorkspaceBody, workspaceIdParam, workspaceSchema } from './profile.schemas.js';

/** `/workspaces`: reads need no credentials (contract rule 7), changes developer or above (`dags:write`). */
export function workspaceRoutes(workspaces: WorkspaceService): AnyRoute[] {
  const tag = 'workspaces';
  return [
    defineRoute({
      tag,
      permission: 'public',
      method: 'get',
      path: '/workspaces',
      operationId: 'listWorkspaces',
      summary: 'List workspaces (DAGs join one with the label workspace=<name>)',
      response: z.object({ workspaces: z.array(workspaceSchema) }),
      handler: async () => ({ workspaces: await workspaces.list() }),
    }),
    defineRoute({
      tag,
      permission: 'dags:write',
      method: 'post',
      path: '/workspaces',
      operationId: 'createWorkspace',
      summary: 'Create a workspace',
      body: createWorkspaceBody,
      response: workspaceSchema,
      successStatus: 201,
      errors: [409],
      handler: (ctx) => workspaces.create(actorOf(ctx), ctx.body),
    }),
    defineRoute({
      tag,
      permission: 'public',
      method: 'get',
      path: '/workspaces/{workspaceId}',
      operationId: 'getWorkspace',
      summary: 'One workspace',
      params: workspaceIdParam,
      response: workspaceSchema,
      errors: [404],
      handler: ({ params }) => workspaces.get(params.workspaceId),
    }),
    defineRoute({
      tag,
      permission: 'dags:write',
      method: 'patch',
      path: '/workspaces/{workspaceId}',
      operationId: 'updateWorkspace',
      summary: 'Rename or describe a workspace (only the given fields; an empty name is ignored); its defaults layer follows the rename',
      params: workspaceIdParam,
      body: updateWorkspaceBody,
      response: workspaceSchema,
      errors: [404, 409],
      handler: (ctx) => workspaces.update(actorOf(ctx), ctx.params.workspaceId, ctx.body),
    }),
    defineRoute({
      tag,
      permission: 'dags:write',
      method: 'delete',
      path: '/workspaces/{workspaceId}',
      operationId: 'deleteWorkspace',
      summary: 'Delete a workspace and its defaults layer; DAGs keep their label',
      params: workspaceIdParam,
      response: NO_CONTENT,
      successStatus: 204,
      errors: [404],
      handler: (ctx) => workspaces.delete(actorOf(ctx), ctx.params.workspaceId),
    }),
  ];
}
