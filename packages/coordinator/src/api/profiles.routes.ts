import { z } from 'zod';
import type { LayerAddress, ProfileService } from '../profiles/profile-service.js';
import { actorOf, defineRoute, NO_CONTENT, type AnyRoute } from '../http/routes.js';
import {
  createProfileBody, entryValueBody, globalKeyParam, profileEntrySchema, profileKeyParam, profileParam, profileSchema, rotationSchema, updateLayerBody, updateProfileBody,
  workspaceKeyParam, workspaceLayerParam,
} from './profile.schemas.js';

/**
 * `/profiles`: reads for callers with run permission (they choose profiles for runs), changes
 * for managers and admins (`profiles:manage`); protected profiles only for admins (the
 * service's rule). Secret values go in and never come out.
 */
export function profileRoutes(profiles: ProfileService): AnyRoute[] {
  const tag = 'profiles';
  return [
    defineRoute({
      tag,
      permission: 'dags:run',
      method: 'get',
      path: '/profiles',
      operationId: 'listProfiles',
      summary: 'List runtime profiles (protected ones only for admins); secret values are never shown',
      response: z.object({ profiles: z.array(profileSchema) }),
      handler: async (ctx) => ({ profiles: await profiles.list(actorOf(ctx)) }),
    }),
    defineRoute({
      tag,
      permission: 'profiles:manage',
      method: 'post',
      path: '/profiles',
      operationId: 'createProfile',
      summary: 'Create a runtime profile (a protected one: admins only)',
      body: createProfileBody,
      response: profileSchema,
      successStatus: 201,
      errors: [403, 409],
      handler: (ctx) => profiles.create(actorOf(ctx), ctx.body),
    }),
    defineRoute({
      tag,
      permission: 'profiles:manage',
      method: 'delete',
      path: '/profiles/{profileName}',
      operationId: 'deleteProfile',
      summary: 'Delete a runtime profile with its entries and sealed secrets',
      params: profileParam,
      response: NO_CONTENT,
      successStatus: 204,
      errors: [403, 404],
      handler: (ctx) => profiles.delete(actorOf(ctx), ctx.params.profileName),
    }),
    ...layerRoutes(profiles, {
      path: '/profiles/{profileName}',
      id: 'Profile',
      what: 'a runtime profile',
      params: profileParam,
      keyParams: profileKeyParam,
      update: updateProfileBody,
      address: (p: { profileName: string }) => ({ scope: 'profile', name: p.profileName }),
    }),
    ...layerRoutes(profiles, {
      path: '/profiles/_global',
      id: 'GlobalProfile',
      what: 'the Global defaults',
      keyParams: globalKeyParam,
      update: updateLayerBody,
      address: () => ({ scope: 'global' }),
    }),
    ...layerRoutes(profiles, {
      path: '/profiles/_workspaces/{workspaceName}',
      id: 'WorkspaceProfile',
      what: "a workspace's defaults (DAGs labelled workspace=<name>)",
      params: workspaceLayerParam,
      keyParams: workspaceKeyParam,
      update: updateLayerBody,
      address: (p: { workspaceName: string }) => ({ scope: 'workspace', workspaceName: p.workspaceName }),
    }),
    defineRoute({
      tag: 'secrets',
      permission: 'secrets:manage',
      method: 'post',
      path: '/secrets/rotate-key',
      operationId: 'rotateSecretsKey',
      summary: "Re-encrypt every secret under this coordinator's current key-encryption key (values stay readable throughout)",
      response: rotationSchema,
      errors: [503],
      handler: (ctx) => profiles.rotateKey(actorOf(ctx)),
    }),
  ];
}

interface LayerSpec<P extends z.ZodType, K extends z.ZodType> {
  path: string;
  id: string;
  what: string;
  params?: P;
  keyParams: K;
  update: z.ZodType<{ description?: string | undefined; status?: 'active' | 'disabled' | undefined; protected?: boolean | undefined }>;
  address(params: z.output<P>): LayerAddress;
}

/** Read, describe, and set or delete entries of one kind of layer: the routes every layer shares. */
function layerRoutes<P extends z.ZodType, K extends z.ZodType>(profiles: ProfileService, spec: LayerSpec<P, K>): AnyRoute[] {
  const tag = 'profiles';
  const address = (params: unknown): LayerAddress => spec.address(params as z.output<P>);
  const keyOf = (params: unknown): string => (params as { key: string }).key;
  const setter = (kind: 'variables' | 'secrets'): AnyRoute =>
    defineRoute({
      tag,
      permission: 'profiles:manage',
      method: 'put',
      path: `${spec.path}/${kind}/{key}`,
      operationId: `set${spec.id}${kind === 'variables' ? 'Variable' : 'Secret'}`,
      summary: kind === 'variables' ? `Set a variable of ${spec.what}` : `Set or rotate a secret of ${spec.what}; the value is encrypted at rest and never returned`,
      params: spec.keyParams,
      body: entryValueBody,
      response: profileEntrySchema,
      errors: [403, 404, ...(kind === 'secrets' ? [503] : [])],
      handler: (ctx) =>
        kind === 'variables'
          ? profiles.setVariable(actorOf(ctx), address(ctx.params), keyOf(ctx.params), ctx.body.value)
          : profiles.setSecret(actorOf(ctx), address(ctx.params), keyOf(ctx.params), ctx.body.value),
    });
  return [
    defineRoute({
      tag,
      permission: 'dags:run',
      method: 'get',
      path: spec.path,
      operationId: `get${spec.id}`,
      summary: `Read ${spec.what}: entries with key, kind and backing secret id`,
      ...(spec.params !== undefined ? { params: spec.params } : {}),
      response: profileSchema,
      errors: [403, 404],
      handler: (ctx) => profiles.get(actorOf(ctx), address(ctx.params)),
    }),
    defineRoute({
      tag,
      permission: 'profiles:manage',
      method: 'patch',
      path: spec.path,
      operationId: `update${spec.id}`,
      summary: `Change ${spec.what} (only the given fields)`,
      ...(spec.params !== undefined ? { params: spec.params } : {}),
      body: spec.update,
      response: profileSchema,
      errors: [403, 404],
      handler: (ctx) => profiles.update(actorOf(ctx), address(ctx.params), ctx.body),
    }),
    setter('variables'),
    setter('secrets'),
    defineRoute({
      tag,
      permission: 'profiles:manage',
      method: 'delete',
      path: `${spec.path}/entries/{key}`,
      operationId: `delete${spec.id}Entry`,
      summary: `Delete an entry of ${spec.what} (a secret's sealed value with it)`,
      params: spec.keyParams,
      response: NO_CONTENT,
      successStatus: 204,
      errors: [403, 404],
      handler: (ctx) => profiles.deleteEntry(actorOf(ctx), address(ctx.params), keyOf(ctx.params)),
    }),
  ];
}
