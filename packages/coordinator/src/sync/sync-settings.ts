import { z } from 'zod';

/** The shortest auto-sync interval: a pull every few seconds would hammer a shared git host. */
export const MIN_AUTO_SYNC_INTERVAL_SEC = 1;

const repositoryPath = z
  .string()
  .default('')
  .transform((path) => path.replace(/^\/+|\/+$/g, ''))
  .refine((path) => path === '' || path.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..'), 'path must be a relative folder inside the repository (no `.` or `..` segments)')
  .describe('The folder inside the repository that holds the DAGs (`<fileName>.yaml`) and `docs/` (`<id>.md`); empty: the repository root');

/** The settings of `GET/PUT /sync/config`, with their defaults; the token is not among them (it is sealed apart). */
export const syncSettingsSchema = z.object({
  enabled: z.boolean().default(false),
  repository: z
    .string()
    .default('')
    .refine((url) => url === '' || /^https?:\/\//.test(url), 'repository must be an http:// or https:// URL (smart HTTP; SSH is not supported)'),
  branch: z.string().min(1, 'branch must not be empty').regex(/^[A-Za-z0-9._/-]+$/, 'branch must be a branch name').default('main'),
  path: repositoryPath,
  pushEnabled: z.boolean().default(true).describe('false: read-only mode; the repository is the only source of DAGs and documents'),
  autoSync: z
    .object({
      enabled: z.boolean().default(false),
      onStartup: z.boolean().default(true),
      interval: z.number().int().min(MIN_AUTO_SYNC_INTERVAL_SEC, `autoSync.interval must be at least ${MIN_AUTO_SYNC_INTERVAL_SEC} second`).default(300).describe('Seconds between pulls'),
    })
    .prefault({}),
  commit: z
    .object({
      authorName: z.string().min(1).default('Trellis'),
      authorEmail: z.string().min(1).default('trellis@localhost'),
    })
    .prefault({}),
});

export type SyncSettings = z.output<typeof syncSettingsSchema>;

export const DEFAULT_SYNC_SETTINGS: SyncSettings = syncSettingsSchema.parse({});
