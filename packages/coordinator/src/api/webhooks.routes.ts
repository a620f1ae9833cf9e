import { z } from 'zod';
import { rawBodyOf } from '../http/raw-body.js';
import { defineRoute, NO_CONTENT, type AnyRoute, actorOf } from '../http/routes.js';
import type { WebhookService } from '../webhooks/webhook-service.js';
import { createWebhookBody, setWebhookProfilesBody, toggleWebhookBody, triggerWebhookBody, webhookSchema, webhookWithSecretsSchema } from './access.schemas.js';
import { profileHeaders } from './profile.schemas.js';
import { DAG_FILE_NAME } from '@trellis/core';

const fileNameParam = z.object({ fileName: z.string().regex(DAG_FILE_NAME, 'Invalid DAG name format') });

/** Webhook management (admin, `users:manage`) under `/dags/{fileName}/webhook`, and the call itself. */
export function webhookRoutes(webhooks: WebhookService): AnyRoute[] {
  const manage = { tag: 'webhooks', permission: 'users:manage' as const, params: fileNameParam };
  return [
    defineRoute({
      method: 'post',
      path: '/webhooks/{fileName}',
      operationId: 'triggerWebhook',
      summary:
        "Start a run of the DAG with its webhook token (`Authorization: Bearer svc_wh_...`); `payload` reaches the steps as WEBHOOK_PAYLOAD. Optional header `X-Svc-Profile`: a runtime profile on the webhook's allowlist (403 otherwise), active (400 when disabled); without it the configured default profile applies, if any, when on the allowlist or not protected (403 otherwise)",
      tag: 'webhooks',
      permission: 'webhook',
      params: fileNameParam,
      body: triggerWebhookBody,
      headers: profileHeaders,
      response: z.object({ dagRunId: z.string(), dagName: z.string() }),
      errors: [401, 403, 404, 409],
      handler: ({ params, body, headers, req }) => {
        return webhooks.trigger(params.fileName, {
          profileName: headers['X-Svc-Profile'],
          authorization: req.headers.authorization,
          signature: { timestamp: req.header('x-svc-timestamp'), signature: req.header('x-svc-signature') },
          rawBody: rawBodyOf(req),
          dagRunId: body.dagRunId,
          payload: body.payload,
        });
      },
    }),
    defineRoute({
      method: 'get',
      path: '/webhooks',
      operationId: 'listWebhooks',
      summary: 'Every webhook (never its token)',
      tag: 'webhooks',
      permission: 'users:manage',
      response: z.object({ webhooks: z.array(webhookSchema) }),
      handler: async () => ({ webhooks: await webhooks.list() }),
    }),
    defineRoute({
      ...manage,
      method: 'get',
      path: '/dags/{fileName}/webhook',
      operationId: 'getDagWebhook',
      summary: "The DAG's webhook",
      response: webhookSchema,
      errors: [404],
      handler: ({ params }) => webhooks.get(params.fileName),
    }),
    defineRoute({
      ...manage,
      method: 'post',
      path: '/dags/{fileName}/webhook',
      operationId: 'createDagWebhook',
      summary: 'Create the webhook of a DAG; its token (and signing secret) are returned only in this answer',
      body: createWebhookBody,
      response: webhookWithSecretsSchema,
      successStatus: 201,
      errors: [404, 409],
      handler: (ctx) => webhooks.create(actorOf(ctx), ctx.params.fileName, ctx.body.requireSignature ?? false, ctx.body.profileAllowlist ?? []),
    }),
    defineRoute({
      ...manage,
      method: 'delete',
      path: '/dags/{fileName}/webhook',
      operationId: 'deleteDagWebhook',
      summary: "Delete the DAG's webhook",
      response: NO_CONTENT,
      successStatus: 204,
      errors: [404],
      handler: (ctx) => webhooks.delete(actorOf(ctx), ctx.params.fileName),
    }),
    defineRoute({
      ...manage,
      method: 'post',
      path: '/dags/{fileName}/webhook/regenerate',
      operationId: 'regenerateDagWebhook',
      summary: 'A new token (and signing secret) for the webhook; the old ones stop working',
      response: webhookWithSecretsSchema,
      errors: [404],
      handler: (ctx) => webhooks.regenerate(actorOf(ctx), ctx.params.fileName),
    }),
    defineRoute({
      ...manage,
      method: 'post',
      path: '/dags/{fileName}/webhook/toggle',
      operationId: 'toggleDagWebhook',
      summary: 'Enable or disable the webhook',
      body: toggleWebhookBody,
      response: webhookSchema,
      errors: [404],
      handler: (ctx) => webhooks.toggle(actorOf(ctx), ctx.params.fileName, ctx.body.enabled),
    }),
    defineRoute({
      ...manage,
      method: 'put',
      path: '/dags/{fileName}/webhook/profiles',
      operationId: 'setDagWebhookProfiles',
      summary: "Replace the runtime profiles the webhook's callers may select with X-Svc-Profile (protected ones included)",
      body: setWebhookProfilesBody,
      response: webhookSchema,
      errors: [404],
      handler: (ctx) => webhooks.setProfileAllowlist(actorOf(ctx), ctx.params.fileName, ctx.body.profileAllowlist),
    }),
  ];
}
