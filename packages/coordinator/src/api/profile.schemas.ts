/** Request and response schemas of workspaces, runtime profiles and the secret store. */
import { z } from 'zod';
import { MAX_PROFILE_NAME_LENGTH, PROFILE_NAME, profileKeyProblem, workspaceNameProblem } from '@trellis/core';

const stamp = z.string().describe('RFC 3339');

export const workspaceSchema = z
  .object({
    id: z.string().describe('UUID'),
    name: z.string(),
    description: z.string().optional(),
    createdAt: stamp,
    updatedAt: stamp,
  })
  .meta({ id: 'Workspace' });

/** A string that `problemOf` judges: its answer, when any, is the 400's message. */
function judgedString(problemOf: (value: string) => string | undefined) {
  return z.string().superRefine((value, ctx) => {
    const problem = problemOf(value);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  });
}

const WORKSPACE_NAME_RULE = 'A lowercase slug: a lowercase letter or digit, then lowercase letters, digits, ".", "_", "-"; at most 100 characters';

/** The workspace name rule (a lowercase slug, like profile names), wherever a name is given. */
export const workspaceNameSchema = judgedString(workspaceNameProblem).describe(WORKSPACE_NAME_RULE);
const workspaceDescription = z.string().max(500, 'at most 500 characters');

export const createWorkspaceBody = z.object({
  name: z.string({ error: 'Name is required' }).trim().min(1, 'Name is required').pipe(workspaceNameSchema),
  description: workspaceDescription.optional(),
});
export const updateWorkspaceBody = z.object({
  name: z
    .string()
    .trim()
    .pipe(judgedString((name) => (name === '' ? undefined : workspaceNameProblem(name))))
    .optional()
    .describe(`${WORKSPACE_NAME_RULE}; an empty string is ignored`),
  description: workspaceDescription.optional(),
});
export const workspaceIdParam = z.object({ workspaceId: z.string().min(1).describe('UUID') });

export const profileNameSchema = z
  .string()
  .max(MAX_PROFILE_NAME_LENGTH, `at most ${MAX_PROFILE_NAME_LENGTH} characters`)
  .regex(PROFILE_NAME, 'a profile name is a lowercase slug: a lowercase letter or digit, then lowercase letters, digits, ".", "_", "-"');

/** The `X-Svc-Profile` header: a runtime profile chosen by header (webhook calls, and run starts as an alternative to `profileName`). */
export const profileHeaders = z.object({
  'X-Svc-Profile': profileNameSchema.optional().describe('A runtime profile to run with'),
});

const keySchema = judgedString(profileKeyProblem);

export const profileParam = z.object({ profileName: profileNameSchema });
export const profileKeyParam = z.object({ profileName: profileNameSchema, key: keySchema });
export const globalKeyParam = z.object({ key: keySchema });
export const workspaceLayerParam = z.object({ workspaceName: workspaceNameSchema });
export const workspaceKeyParam = z.object({ workspaceName: workspaceNameSchema, key: keySchema });

/** Variables and secrets alike; the bound keeps one entry from swamping an environment. */
export const entryValueBody = z.object({ value: z.string({ error: 'value (string) is required' }).max(65_536, 'at most 65536 characters') });

const profileDescription = z.string().max(500, 'at most 500 characters');

export const createProfileBody = z.object({
  name: z.string({ error: 'Name is required' }).min(1, 'Name is required').pipe(profileNameSchema),
  description: profileDescription.optional(),
  protected: z.boolean().optional().describe('Only admins may create, view, change, delete or use it'),
});
export const updateProfileBody = z.object({
  description: profileDescription.optional(),
  status: z.enum(['active', 'disabled'], { error: 'status must be active or disabled' }).optional(),
  protected: z.boolean().optional(),
});
/** Strict: status and protected belong to named profiles, and saying them to a defaults layer is refused, not ignored. */
export const updateLayerBody = z.strictObject({ description: profileDescription.optional() });

export const profileEntrySchema = z
  .object({
    key: z.string(),
    kind: z.enum(['variable', 'secret']),
    value: z.string().optional().describe('Variables only: a secret is write-only'),
    secretId: z.string().optional().describe('Secrets only: the id of the sealed value backing it'),
    updatedAt: stamp,
  })
  .meta({ id: 'RuntimeProfileEntry' });

export const profileSchema = z
  .object({
    name: z.string().describe('The profile name; `_global` or `_workspaces/<workspace>` for defaults layers'),
    scope: z.enum(['global', 'workspace', 'profile']),
    workspace: z.string().optional(),
    description: z.string(),
    status: z.enum(['active', 'disabled']),
    protected: z.boolean(),
    entries: z.array(profileEntrySchema),
    createdAt: stamp.optional().describe('Omitted for a defaults layer never written to'),
    updatedAt: stamp.optional(),
  })
  .meta({ id: 'RuntimeProfile' });

export const rotationSchema = z.object({
  keyId: z.string().describe('The key every value readable here is now sealed with'),
  reencrypted: z.number().int(),
  remaining: z.record(z.string(), z.number().int()).describe('Values still sealed with keys this coordinator does not hold, by key id'),
});
