import type { SyncService } from '../sync/sync-service.js';
import type { AutoSync } from '../sync/auto-sync.js';
import { actorOf, defineRoute, type AnyRoute } from '../http/routes.js';
import {
  cleanupSchema, deleteMissingBody, deleteMissingSchema, moveItemBody, publishAllBody, publishItemBody, syncConfigBody, syncConfigSchema, syncConflictSchema, syncDiffSchema,
  syncItemParam, syncMessageSchema, syncOutcomeSchema, syncStatusSchema, testConnectionSchema,
} from './sync.schemas.js';

/**
 * `/sync`: repository sync of DAGs and documents. Reads for every reader; steps that change
 * DAGs, documents or the repository need `dags:write`; the settings (they hold the token)
 * are the admin's (`secrets:manage`). The steps that answer a message rather than a
 * pull-shaped result answer 503 when the repository cannot be reached (see SyncService).
 */
export function syncRoutes(sync: SyncService, autoSync: AutoSync): AnyRoute[] {
  const tag = 'sync';
  return [
    defineRoute({ tag, permission: 'dags:read', method: 'get', path: '/sync/status', operationId: 'getSyncStatus', summary: 'Sync settings in brief, every item with its status, and the counts', response: syncStatusSchema, handler: () => sync.status() }),
    defineRoute({ tag, permission: 'dags:read', method: 'get', path: '/sync/config', operationId: 'getSyncConfig', summary: 'The sync settings; the token is never returned, only auth.type', response: syncConfigSchema, handler: () => sync.config() }),
    defineRoute({
      tag, permission: 'secrets:manage', method: 'put', path: '/sync/config', operationId: 'updateSyncConfig', summary: 'Replace the sync settings (fields omitted keep their value); a token given is sealed like a secret', body: syncConfigBody, response: syncConfigSchema, errors: [400],
      handler: async (ctx) => {
        const config = await sync.updateConfig(actorOf(ctx), ctx.body);
        autoSync.reschedule();
        return config;
      },
    }),
    defineRoute({ tag, permission: 'dags:write', method: 'post', path: '/sync/test-connection', operationId: 'testSyncConnection', summary: 'Whether the repository\'s branch can be read with the stored settings and token', response: testConnectionSchema, handler: () => sync.testConnection() }),
    defineRoute({ tag, permission: 'dags:write', method: 'post', path: '/sync/pull', operationId: 'pullSync', summary: 'Bring the repository\'s changes in; items changed on both sides are reported as conflicts', response: syncOutcomeSchema, errors: [400], handler: (ctx) => sync.pull(actorOf(ctx)) }),
    defineRoute({ tag, permission: 'dags:write', method: 'post', path: '/sync/publish-all', operationId: 'publishAllSync', summary: 'Publish the given items, or every modified and untracked one, in one commit', body: publishAllBody, response: syncOutcomeSchema, errors: [400], handler: (ctx) => sync.publishAll(actorOf(ctx), ctx.body.message, ctx.body.itemIds) }),
    defineRoute({ tag, permission: 'dags:read', method: 'get', path: '/sync/items/{itemId}/diff', operationId: 'getSyncItemDiff', summary: 'An item\'s local and repository content', params: syncItemParam, response: syncDiffSchema, errors: [400, 404, 503], handler: (ctx) => sync.diff(ctx.params.itemId) }),
    defineRoute({
      tag, permission: 'dags:write', method: 'post', path: '/sync/items/{itemId}/publish', operationId: 'publishSyncItem', summary: 'Publish one item; 409 when the repository changed it since the last sync, unless force', params: syncItemParam, body: publishItemBody, response: syncOutcomeSchema, errors: [400, 404, 409], errorBodies: { 409: syncConflictSchema },
      handler: (ctx) => sync.publishItem(actorOf(ctx), ctx.params.itemId, ctx.body.message, ctx.body.force),
    }),
    defineRoute({ tag, permission: 'dags:write', method: 'post', path: '/sync/items/{itemId}/discard', operationId: 'discardSyncItem', summary: 'Drop the local change: the item goes back to the repository\'s version', params: syncItemParam, response: syncMessageSchema, errors: [400, 404, 503], handler: (ctx) => sync.discard(actorOf(ctx), ctx.params.itemId) }),
    defineRoute({ tag, permission: 'dags:write', method: 'post', path: '/sync/items/{itemId}/forget', operationId: 'forgetSyncItem', summary: 'Drop the sync state of a missing, untracked or conflicting item (400 for synced or modified)', params: syncItemParam, response: syncMessageSchema, errors: [400, 404], handler: (ctx) => sync.forget(actorOf(ctx), ctx.params.itemId) }),
    defineRoute({
      tag, permission: 'dags:write', method: 'post', path: '/sync/items/{itemId}/delete', operationId: 'deleteSyncItem', summary: 'Remove an item from the repository, here and from the sync state (400: untracked, modified without force, read-only mode)', params: syncItemParam, body: publishItemBody, response: syncMessageSchema, errors: [400, 404, 503],
      handler: (ctx) => sync.delete(actorOf(ctx), ctx.params.itemId, ctx.body.message, ctx.body.force),
    }),
    defineRoute({ tag, permission: 'dags:write', method: 'post', path: '/sync/delete-missing', operationId: 'deleteMissingSyncItems', summary: 'Remove every item missing here from the repository and the sync state', body: deleteMissingBody, response: deleteMissingSchema, errors: [400, 503], handler: (ctx) => sync.deleteMissing(actorOf(ctx), ctx.body.message) }),
    defineRoute({
      tag, permission: 'dags:write', method: 'post', path: '/sync/items/{itemId}/move', operationId: 'moveSyncItem', summary: 'Rename an item here and in the repository (400: across kinds, read-only mode, invalid id; 409: changed in the repository, unless force)', params: syncItemParam, body: moveItemBody, response: syncMessageSchema, errors: [400, 404, 409, 503], errorBodies: { 409: syncConflictSchema },
      handler: (ctx) => sync.move(actorOf(ctx), ctx.params.itemId, ctx.body.newItemId, ctx.body.message, ctx.body.force),
    }),
    defineRoute({ tag, permission: 'dags:write', method: 'post', path: '/sync/cleanup', operationId: 'cleanupSync', summary: 'Forget the sync state of every missing item (the repository is not touched)', response: cleanupSchema, handler: (ctx) => sync.cleanup(actorOf(ctx)) }),
  ];
}
