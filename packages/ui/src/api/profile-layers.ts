import { api, unwrap, type Schemas } from './client';

export type Profile = Schemas['RuntimeProfile'];
export type ProfileEntry = Schemas['RuntimeProfileEntry'];

/** A named runtime profile, the Global defaults, or a workspace's defaults. */
export type Layer = { scope: 'profile'; name: string } | { scope: 'global' } | { scope: 'workspace'; workspace: string };

export interface LayerCalls {
  get: () => Promise<Profile>;
  /** Named profiles take status and protected too; a defaults layer takes only a description. */
  update: (change: { description?: string; status?: 'active' | 'disabled'; protected?: boolean }) => Promise<Profile>;
  setVariable: (key: string, value: string) => Promise<ProfileEntry>;
  /** Write-only: the value goes in and no answer ever carries it back. */
  setSecret: (key: string, value: string) => Promise<ProfileEntry>;
  deleteEntry: (key: string) => Promise<unknown>;
}

/** The page path of a layer. */
export function layerPath(layer: Layer): string {
  if (layer.scope === 'global') return '/profiles/_global';
  if (layer.scope === 'workspace') return `/profiles/_workspaces/${encodeURIComponent(layer.workspace)}`;
  return `/profiles/${encodeURIComponent(layer.name)}`;
}

export function layerTitle(layer: Layer): string {
  if (layer.scope === 'global') return 'Global defaults';
  if (layer.scope === 'workspace') return `Defaults of workspace ${layer.workspace}`;
  return `Profile ${layer.name}`;
}

/** The API calls of one layer: the three kinds share their operations under different paths. */
export function layerCalls(layer: Layer): LayerCalls {
  if (layer.scope === 'global') {
    return {
      get: () => unwrap(api.GET('/profiles/_global')),
      update: ({ description }) => unwrap(api.PATCH('/profiles/_global', { body: description !== undefined ? { description } : {} })),
      setVariable: (key, value) => unwrap(api.PUT('/profiles/_global/variables/{key}', { params: { path: { key } }, body: { value } })),
      setSecret: (key, value) => unwrap(api.PUT('/profiles/_global/secrets/{key}', { params: { path: { key } }, body: { value } })),
      deleteEntry: (key) => unwrap(api.DELETE('/profiles/_global/entries/{key}', { params: { path: { key } } })),
    };
  }
  if (layer.scope === 'workspace') {
    const workspaceName = layer.workspace;
    return {
      get: () => unwrap(api.GET('/profiles/_workspaces/{workspaceName}', { params: { path: { workspaceName } } })),
      update: ({ description }) => unwrap(api.PATCH('/profiles/_workspaces/{workspaceName}', { params: { path: { workspaceName } }, body: description !== undefined ? { description } : {} })),
      setVariable: (key, value) => unwrap(api.PUT('/profiles/_workspaces/{workspaceName}/variables/{key}', { params: { path: { workspaceName, key } }, body: { value } })),
      setSecret: (key, value) => unwrap(api.PUT('/profiles/_workspaces/{workspaceName}/secrets/{key}', { params: { path: { workspaceName, key } }, body: { value } })),
      deleteEntry: (key) => unwrap(api.DELETE('/profiles/_workspaces/{workspaceName}/entries/{key}', { params: { path: { workspaceName, key } } })),
    };
  }
  const profileName = layer.name;
  return {
    get: () => unwrap(api.GET('/profiles/{profileName}', { params: { path: { profileName } } })),
    update: (change) => unwrap(api.PATCH('/profiles/{profileName}', { params: { path: { profileName } }, body: change })),
    setVariable: (key, value) => unwrap(api.PUT('/profiles/{profileName}/variables/{key}', { params: { path: { profileName, key } }, body: { value } })),
    setSecret: (key, value) => unwrap(api.PUT('/profiles/{profileName}/secrets/{key}', { params: { path: { profileName, key } }, body: { value } })),
    deleteEntry: (key) => unwrap(api.DELETE('/profiles/{profileName}/entries/{key}', { params: { path: { profileName, key } } })),
  };
}
