import { randomUUID } from 'node:crypto';
import { AlreadyExistsError, NotFoundError } from '@trellis/core';
import { deleteWorkspace, getWorkspace, insertWorkspace, listWorkspaces, NameTakenError, updateWorkspace, type Db, type WorkspaceRecord } from '@trellis/store';
import { recordAudit } from '../auth/audit.js';
import type { Principal } from '../auth/principal.js';

export interface WorkspaceView {
  id: string;
  name: string;
  description?: string;
  createdAt: string;
  updatedAt: string;
}

/** Workspaces group DAGs (by their label `workspace=<name>`) and carry a defaults layer of runtime-profile entries. */
export class WorkspaceService {
  constructor(private readonly db: Db) {}

  async list(): Promise<WorkspaceView[]> {
    return (await listWorkspaces(this.db)).map(view);
  }

  async get(id: string): Promise<WorkspaceView> {
    return view(await this.require(id, getWorkspace(this.db, id)));
  }

  async create(actor: Principal, input: { name: string; description?: string | undefined }): Promise<WorkspaceView> {
    const record = await named(input.name, () => insertWorkspace(this.db, { id: randomUUID(), name: input.name, description: input.description ?? '' }));
    await recordAudit(this.db, actor, { type: 'workspace.created', message: `created workspace ${record.name}`, data: { workspaceId: record.id, name: record.name } });
    return view(record);
  }

  /** An empty name is ignored, as the contract says. */
  async update(actor: Principal, id: string, change: { name?: string | undefined; description?: string | undefined }): Promise<WorkspaceView> {
    const name = change.name !== undefined && change.name !== '' ? change.name : undefined;
    const fields = { ...(name !== undefined ? { name } : {}), ...(change.description !== undefined ? { description: change.description } : {}) };
    const record = await this.require(id, named(name ?? '', () => updateWorkspace(this.db, id, fields)));
    await recordAudit(this.db, actor, { type: 'workspace.updated', message: `updated workspace ${record.name}`, data: { workspaceId: id, changed: Object.keys(fields), name: record.name } });
    return view(record);
  }

  /** Its defaults layer goes with it; DAGs keep their label. */
  async delete(actor: Principal, id: string): Promise<void> {
    const record = await this.require(id, deleteWorkspace(this.db, id));
    await recordAudit(this.db, actor, { type: 'workspace.deleted', message: `deleted workspace ${record.name}`, data: { workspaceId: id, name: record.name } });
  }

  private async require(id: string, read: Promise<WorkspaceRecord | undefined>): Promise<WorkspaceRecord> {
    const record = await read;
    if (record === undefined) throw new NotFoundError('Workspace not found', { workspaceId: id });
    return record;
  }
}

async function named<T>(name: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (error instanceof NameTakenError) throw new AlreadyExistsError(`a workspace named ${name} already exists`, { name });
    throw error;
  }
}

function view(record: WorkspaceRecord): WorkspaceView {
  return {
    id: record.id,
    name: record.name,
    ...(record.description !== '' ? { description: record.description } : {}),
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
  };
}
