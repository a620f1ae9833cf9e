import { z } from 'zod';
import type { ApiKeyService } from '../auth/api-keys.js';
import { defineRoute, NO_CONTENT, type AnyRoute, actorOf } from '../http/routes.js';
import { apiKeySchema, createApiKeyBody, keyIdParam, updateApiKeyBody } from './access.schemas.js';

/** `/api-keys`: admin only (`users:manage`). The secret is in the create answer only. */
export function apiKeyRoutes(keys: ApiKeyService): AnyRoute[] {
  const common = { tag: 'api-keys', permission: 'users:manage' as const };
  return [
    defineRoute({
      ...common,
      method: 'get',
      path: '/api-keys',
      operationId: 'listApiKeys',
      summary: 'List API keys (never their secrets)',
      response: z.object({ apiKeys: z.array(apiKeySchema) }),
      handler: async () => ({ apiKeys: await keys.list() }),
    }),
    defineRoute({
      ...common,
      method: 'post',
      path: '/api-keys',
      operationId: 'createApiKey',
      summary: 'Create an API key; the key is returned only in this answer',
      body: createApiKeyBody,
      response: z.object({ apiKey: apiKeySchema, key: z.string().describe('`svc_...`, shown only now') }),
      successStatus: 201,
      errors: [409],
      handler: (ctx) => keys.create(actorOf(ctx), ctx.body),
    }),
    defineRoute({
      ...common,
      method: 'get',
      path: '/api-keys/{keyId}',
      operationId: 'getApiKey',
      summary: 'One API key',
      params: keyIdParam,
      response: z.object({ apiKey: apiKeySchema }),
      errors: [404],
      handler: async ({ params }) => ({ apiKey: await keys.get(params.keyId) }),
    }),
    defineRoute({
      ...common,
      method: 'patch',
      path: '/api-keys/{keyId}',
      operationId: 'updateApiKey',
      summary: 'Change the name, description or role of an API key (only the given fields)',
      params: keyIdParam,
      body: updateApiKeyBody,
      response: z.object({ apiKey: apiKeySchema }),
      errors: [404, 409],
      handler: async (ctx) => ({ apiKey: await keys.update(actorOf(ctx), ctx.params.keyId, ctx.body) }),
    }),
    defineRoute({
      ...common,
      method: 'delete',
      path: '/api-keys/{keyId}',
      operationId: 'deleteApiKey',
      summary: 'Delete an API key; it stops working at once here, within seconds on other coordinators',
      params: keyIdParam,
      response: NO_CONTENT,
      successStatus: 204,
      errors: [404],
      handler: async (ctx) => keys.delete(actorOf(ctx), ctx.params.keyId),
    }),
  ];
}

