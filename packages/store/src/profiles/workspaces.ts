import type { Queryable } from '../db/types.js';
import { isUniqueViolation, NameTakenError } from '../auth/unique.js';

export interface WorkspaceRecord {
  id: string;
  name: string;
  description: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface WorkspaceChange {
  name?: string;
  description?: string;
}

const COLUMNS = `id::text AS id, name, description, created_at AS "createdAt", updated_at AS "updatedAt"`;

/** A workspace id is a UUID: any other text matches no row (compared as text, so it is never a cast error). */
const BY_ID = 'id::text = $1';

/** Throws NameTakenError when a workspace of that name exists. */
export async function insertWorkspace(q: Queryable, workspace: { id: string; name: string; description: string }): Promise<WorkspaceRecord> {
  const [row] = await q.query<WorkspaceRecord>(
    `INSERT INTO workspaces (id, name, description) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING RETURNING ${COLUMNS}`,
    [workspace.id, workspace.name, workspace.description],
  );
  if (row === undefined) throw new NameTakenError(`a workspace named ${workspace.name}`);
  return row;
}

export async function listWorkspaces(q: Queryable): Promise<WorkspaceRecord[]> {
  return q.query<WorkspaceRecord>(`SELECT ${COLUMNS} FROM workspaces ORDER BY name`);
}

export async function getWorkspace(q: Queryable, id: string): Promise<WorkspaceRecord | undefined> {
  const [row] = await q.query<WorkspaceRecord>(`SELECT ${COLUMNS} FROM workspaces WHERE ${BY_ID}`, [id]);
  return row;
}

export async function getWorkspaceByName(q: Queryable, name: string): Promise<WorkspaceRecord | undefined> {
  const [row] = await q.query<WorkspaceRecord>(`SELECT ${COLUMNS} FROM workspaces WHERE name = $1`, [name]);
  return row;
}

/** Only the given fields change; undefined when no such workspace; NameTakenError on a taken name. */
export async function updateWorkspace(q: Queryable, id: string, change: WorkspaceChange): Promise<WorkspaceRecord | undefined> {
  try {
    const [row] = await q.query<WorkspaceRecord>(
      `UPDATE workspaces SET name = COALESCE($2, name), description = COALESCE($3, description), updated_at = now() WHERE ${BY_ID} RETURNING ${COLUMNS}`,
      [id, change.name ?? null, change.description ?? null],
    );
    return row;
  } catch (error) {
    if (isUniqueViolation(error)) throw new NameTakenError(`a workspace named ${change.name ?? ''}`);
    throw error;
  }
}

/** Its defaults layer goes with it (ON DELETE CASCADE). */
export async function deleteWorkspace(q: Queryable, id: string): Promise<WorkspaceRecord | undefined> {
  const [row] = await q.query<WorkspaceRecord>(`DELETE FROM workspaces WHERE ${BY_ID} RETURNING ${COLUMNS}`, [id]);
  return row;
}
