/** Request and response schemas of API keys and webhooks. */
import { z } from 'zod';
import { API_KEY_ROLES } from '../auth/api-keys.js';
import { profileNameSchema } from './profile.schemas.js';

const stamp = z.string().describe('RFC 3339');

export const apiKeySchema = z
  .object({
    id: z.string().describe('UUID'),
    name: z.string(),
    description: z.string(),
    role: z.enum(API_KEY_ROLES),
    keyPrefix: z.string().describe('The leading characters of the key, for telling keys apart'),
    createdAt: stamp,
    updatedAt: stamp,
    createdBy: z.string().describe('Id of the principal that created it'),
    lastUsedAt: stamp.optional().describe('Omitted when never used'),
  })
  .meta({ id: 'ApiKey' });

const name = z.string().min(1, 'Name is required').max(100, 'at most 100 characters');
const description = z.string().max(500, 'at most 500 characters');
const role = z.enum(API_KEY_ROLES, { error: 'role must be one of admin, manager, operator, viewer' });

export const createApiKeyBody = z.object({ name: z.string({ error: 'Name is required' }).pipe(name), description: description.optional(), role });
export const updateApiKeyBody = z.object({ name: name.optional(), description: description.optional(), role: role.optional() });
export const keyIdParam = z.object({ keyId: z.string().min(1) });

export const webhookSchema = z
  .object({
    id: z.string().describe('UUID'),
    dagName: z.string().describe('The file name of the DAG it starts'),
    tokenPrefix: z.string(),
    enabled: z.boolean(),
    signatureRequired: z.boolean().describe('Calls must carry X-Svc-Signature and X-Svc-Timestamp'),
    profileAllowlist: z.array(z.string()).describe('Runtime profiles its callers may select with X-Svc-Profile, protected ones included'),
    createdAt: stamp,
    updatedAt: stamp,
    createdBy: z.string(),
    lastUsedAt: stamp.optional().describe('Omitted when never called'),
  })
  .meta({ id: 'Webhook' });

export const webhookWithSecretsSchema = z.object({
  webhook: webhookSchema,
  token: z.string().describe('`svc_wh_...`, shown only now'),
  signingSecret: z.string().optional().describe('The HMAC secret, shown only now; present when signatures are required'),
});

const profileAllowlist = z.array(profileNameSchema).max(100, 'at most 100 profiles');

export const setWebhookProfilesBody = z.object({ profileAllowlist: profileAllowlist.describe('Replaces the list; profiles need not exist yet, but must exist and be active when selected') });

export const createWebhookBody = z.object({
  profileAllowlist: profileAllowlist.optional().describe('Runtime profiles callers may select with X-Svc-Profile (default none)'),
  requireSignature: z
    .boolean()
    .optional()
    .describe('Issue a signing secret: calls must then send `X-Svc-Timestamp` (Unix seconds, within 5 minutes) and `X-Svc-Signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<raw body>">`'),
});

export const toggleWebhookBody = z.object({ enabled: z.boolean({ error: 'enabled (boolean) is required' }) });

export const triggerWebhookBody = z.object({
  dagRunId: z.string().optional().describe('Idempotency: a second call with the same id answers 409'),
  payload: z.record(z.string(), z.unknown()).optional().describe('Handed to the steps as WEBHOOK_PAYLOAD (JSON)'),
});
