import { z } from 'zod';
import { MIN_AUTO_SYNC_INTERVAL_SEC } from '../sync/sync-settings.js';
import { SYNC_STATUSES } from '../sync/sync-items.js';

export const syncItemParam = z.object({ itemId: z.string().min(1).describe('A DAG file name, or `docs/` and a document id (slashes URL-encoded)') });

export const syncItemSchema = z
  .object({
    itemId: z.string(),
    filePath: z.string().describe('The file in the repository'),
    displayName: z.string(),
    kind: z.enum(['dag', 'doc']),
    status: z.enum(SYNC_STATUSES as [string, ...string[]]),
  })
  .meta({ id: 'SyncItem' });

const countsSchema = z.object(Object.fromEntries(SYNC_STATUSES.map((s) => [s, z.number().int()])));

export const syncStatusSchema = z.object({
  enabled: z.boolean(),
  repository: z.string(),
  branch: z.string(),
  summary: z.string(),
  lastSyncAt: z.string().describe('Empty until the first pull or publish'),
  lastSyncCommit: z.string(),
  items: z.array(syncItemSchema),
  counts: countsSchema,
});

export const syncOutcomeSchema = z
  .object({
    success: z.boolean(),
    message: z.string(),
    synced: z.array(z.string()),
    modified: z.array(z.string()),
    conflicts: z.array(z.string()),
    errors: z.array(z.string()).describe('A repository that cannot be reached or refuses the token is reported here, with success false'),
    timestamp: z.string(),
  })
  .meta({ id: 'SyncResult' });

export const syncConflictSchema = z.object({
  code: z.string(),
  message: z.string(),
  itemId: z.string(),
  remoteCommit: z.string(),
  remoteAuthor: z.string(),
  remoteMessage: z.string(),
});

const autoSyncSchema = z.object({ enabled: z.boolean(), onStartup: z.boolean(), interval: z.number().int().describe('Seconds between pulls') });
const commitAuthorSchema = z.object({ authorName: z.string(), authorEmail: z.string() });

export const syncConfigSchema = z
  .object({
    enabled: z.boolean(),
    repository: z.string(),
    branch: z.string(),
    path: z.string(),
    pushEnabled: z.boolean(),
    auth: z.object({ type: z.enum(['none', 'token']) }).describe('The token itself is never returned'),
    autoSync: autoSyncSchema,
    commit: commitAuthorSchema,
  })
  .meta({ id: 'SyncConfig' });

export const syncConfigBody = z.object({
  enabled: z.boolean().optional(),
  repository: z.string().optional(),
  branch: z.string().optional(),
  path: z.string().optional(),
  pushEnabled: z.boolean().optional(),
  auth: z.object({ type: z.enum(['none', 'token']), token: z.string().optional().describe('Kept sealed; omit to keep the stored one') }).optional(),
  autoSync: z.object({ enabled: z.boolean().optional(), onStartup: z.boolean().optional(), interval: z.number().int().min(MIN_AUTO_SYNC_INTERVAL_SEC).optional() }).optional(),
  commit: z.object({ authorName: z.string().min(1).optional(), authorEmail: z.string().min(1).optional() }).optional(),
});

export const publishAllBody = z.object({ message: z.string().optional(), itemIds: z.array(z.string()).optional().describe('Omitted: every modified and untracked item') }).default({});
export const publishItemBody = z.object({ message: z.string().optional(), force: z.boolean().default(false) }).default({ force: false });
export const deleteMissingBody = z.object({ message: z.string().optional() }).default({});
export const moveItemBody = z.object({ newItemId: z.string({ error: 'newItemId is required' }).min(1, 'newItemId is required'), message: z.string().optional(), force: z.boolean().default(false) });

export const syncDiffSchema = z.object({ itemId: z.string(), filePath: z.string(), status: z.enum(SYNC_STATUSES as [string, ...string[]]), localContent: z.string(), remoteContent: z.string() });
export const syncMessageSchema = z.object({ message: z.string() });
export const testConnectionSchema = z.object({ success: z.boolean(), message: z.string() });
export const deleteMissingSchema = z.object({ deleted: z.array(z.string()), message: z.string() });
export const cleanupSchema = z.object({ forgotten: z.array(z.string()), message: z.string() });
