import type { Queryable } from '../db/types.js';
import { isUniqueViolation, NameTakenError } from '../auth/unique.js';

/** Which layer a row is: the Global defaults, a workspace's defaults, or a named profile. */
export type LayerScope = 'global' | 'workspace' | 'profile';

export interface ProfileRecord {
  id: string;
  scope: LayerScope;
  /** Named profiles only. */
  name: string | null;
  /** Workspace layers only: the workspace's current name. */
  workspaceName: string | null;
  description: string;
  status: 'active' | 'disabled';
  protected: boolean;
  createdBy: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface ProfileEntryRecord {
  profileId: string;
  key: string;
  kind: 'variable' | 'secret';
  /** Variables only; a secret's value is sealed in `profile_secrets`. */
  value: string | null;
  secretId: string | null;
  updatedBy: string;
  updatedAt: Date;
}

export interface ProfileChange {
  description?: string;
  status?: 'active' | 'disabled';
  protected?: boolean;
}

/** Where a layer is: a named profile, the Global layer, or a workspace's (by workspace id). */
export type LayerRef = { scope: 'profile'; name: string } | { scope: 'global' } | { scope: 'workspace'; workspaceId: string };

const COLUMNS = `p.id::text AS id, p.scope, p.name, w.name AS "workspaceName", p.description, p.status, p.protected,
  p.created_by AS "createdBy", p.created_at AS "createdAt", p.updated_at AS "updatedAt"`;
const FROM = 'profiles p LEFT JOIN workspaces w ON w.id = p.workspace_id';
const ENTRY_COLUMNS = `profile_id::text AS "profileId", key, kind, value, secret_id::text AS "secretId", updated_by AS "updatedBy", updated_at AS "updatedAt"`;

function where(ref: LayerRef): { sql: string; params: unknown[] } {
  if (ref.scope === 'profile') return { sql: `p.scope = 'profile' AND p.name = $1`, params: [ref.name] };
  if (ref.scope === 'global') return { sql: `p.scope = 'global'`, params: [] };
  return { sql: `p.scope = 'workspace' AND p.workspace_id::text = $1`, params: [ref.workspaceId] };
}

/** Throws NameTakenError when a profile of that name exists. */
export async function insertProfile(q: Queryable, profile: { id: string; name: string; description: string; protected: boolean; createdBy: string }): Promise<ProfileRecord> {
  try {
    await q.query(`INSERT INTO profiles (id, scope, name, description, protected, created_by) VALUES ($1, 'profile', $2, $3, $4, $5)`, [
      profile.id,
      profile.name,
      profile.description,
      profile.protected,
      profile.createdBy,
    ]);
  } catch (error) {
    if (isUniqueViolation(error)) throw new NameTakenError(`a profile named ${profile.name}`);
    throw error;
  }
  const row = await getLayer(q, { scope: 'profile', name: profile.name });
  if (row === undefined) throw new Error(`profile ${profile.name} vanished`);
  return row;
}

/** Named profiles, by name. */
export async function listProfiles(q: Queryable): Promise<ProfileRecord[]> {
  return q.query<ProfileRecord>(`SELECT ${COLUMNS} FROM ${FROM} WHERE p.scope = 'profile' ORDER BY p.name`);
}

/** The counter every change to workspaces, profiles, their entries and secrets moves (migration 0031). */
export async function profilesVersion(q: Queryable): Promise<number> {
  const [row] = await q.query<{ version: number }>('SELECT version::float8 AS version FROM profile_version');
  return row?.version ?? 0;
}

export async function getLayer(q: Queryable, ref: LayerRef): Promise<ProfileRecord | undefined> {
  const { sql, params } = where(ref);
  const [row] = await q.query<ProfileRecord>(`SELECT ${COLUMNS} FROM ${FROM} WHERE ${sql}`, params);
  return row;
}

/** The Global or a workspace's defaults layer, created on first use. */
export async function ensureDefaultsLayer(q: Queryable, ref: Exclude<LayerRef, { scope: 'profile' }>, id: string, createdBy: string): Promise<ProfileRecord> {
  const workspaceId = ref.scope === 'workspace' ? ref.workspaceId : null;
  await q.query(`INSERT INTO profiles (id, scope, workspace_id, created_by) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`, [id, ref.scope, workspaceId, createdBy]);
  const row = await getLayer(q, ref);
  if (row === undefined) throw new Error(`defaults layer ${ref.scope} vanished`);
  return row;
}

/** Only the given fields change. */
export async function updateProfile(q: Queryable, id: string, change: ProfileChange): Promise<void> {
  await q.query(
    `UPDATE profiles SET description = COALESCE($2, description), status = COALESCE($3, status), protected = COALESCE($4, protected), updated_at = now() WHERE id::text = $1`,
    [id, change.description ?? null, change.status ?? null, change.protected ?? null],
  );
}

/** Its entries and sealed secrets go with it (ON DELETE CASCADE). */
export async function deleteProfile(q: Queryable, id: string): Promise<void> {
  await q.query(`DELETE FROM profiles WHERE id::text = $1`, [id]);
}

/** The entries of the given layers, by key. */
export async function listEntries(q: Queryable, profileIds: string[]): Promise<ProfileEntryRecord[]> {
  if (profileIds.length === 0) return [];
  return q.query<ProfileEntryRecord>(`SELECT ${ENTRY_COLUMNS} FROM profile_entries WHERE profile_id::text = ANY($1::text[]) ORDER BY key`, [profileIds]);
}

export async function getEntry(q: Queryable, profileId: string, key: string): Promise<ProfileEntryRecord | undefined> {
  const [row] = await q.query<ProfileEntryRecord>(`SELECT ${ENTRY_COLUMNS} FROM profile_entries WHERE profile_id::text = $1 AND key = $2`, [profileId, key]);
  return row;
}

/** Sets a plain variable, replacing a secret of the same key (whose sealed value is deleted). */
export async function putVariable(q: Queryable, profileId: string, key: string, value: string, by: string): Promise<ProfileEntryRecord> {
  await lockProfile(q, profileId);
  const [row] = await q.query<ProfileEntryRecord>(
    `INSERT INTO profile_entries (profile_id, key, kind, value, secret_id, updated_by) VALUES ($1, $2, 'variable', $3, NULL, $4)
     ON CONFLICT (profile_id, key) DO UPDATE SET kind = 'variable', value = EXCLUDED.value, secret_id = NULL, updated_by = EXCLUDED.updated_by, updated_at = now()
     RETURNING ${ENTRY_COLUMNS}`,
    [profileId, key, value, by],
  );
  await dropUnlinkedSecrets(q, profileId);
  await touchProfile(q, profileId);
  if (row === undefined) throw new Error(`entry ${key} vanished`);
  return row;
}

/** A secret value as stored: sealed under the key-encryption key `keyId`. */
export interface SealedSecret {
  keyId: string;
  nonce: Buffer;
  ciphertext: Buffer;
  authTag: Buffer;
}

/** Sets a secret entry whose sealed value has id `secretId` (the entry's existing one, or a new one). */
export async function putSecret(q: Queryable, profileId: string, key: string, secretId: string, sealed: SealedSecret, by: string): Promise<ProfileEntryRecord> {
  await lockProfile(q, profileId);
  await q.query(
    `INSERT INTO profile_secrets (id, profile_id, key_id, nonce, ciphertext, auth_tag) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (id) DO UPDATE SET key_id = EXCLUDED.key_id, nonce = EXCLUDED.nonce, ciphertext = EXCLUDED.ciphertext, auth_tag = EXCLUDED.auth_tag, updated_at = now()`,
    [secretId, profileId, sealed.keyId, sealed.nonce, sealed.ciphertext, sealed.authTag],
  );
  const [row] = await q.query<ProfileEntryRecord>(
    `INSERT INTO profile_entries (profile_id, key, kind, value, secret_id, updated_by) VALUES ($1, $2, 'secret', NULL, $3, $4)
     ON CONFLICT (profile_id, key) DO UPDATE SET kind = 'secret', value = NULL, secret_id = EXCLUDED.secret_id, updated_by = EXCLUDED.updated_by, updated_at = now()
     RETURNING ${ENTRY_COLUMNS}`,
    [profileId, key, secretId, by],
  );
  await dropUnlinkedSecrets(q, profileId);
  await touchProfile(q, profileId);
  if (row === undefined) throw new Error(`entry ${key} vanished`);
  return row;
}

/** Deletes an entry and its sealed value; false when there was none. */
export async function deleteEntry(q: Queryable, profileId: string, key: string): Promise<boolean> {
  await lockProfile(q, profileId);
  const [row] = await q.query<{ secretId: string | null }>(`DELETE FROM profile_entries WHERE profile_id::text = $1 AND key = $2 RETURNING secret_id::text AS "secretId"`, [profileId, key]);
  if (row === undefined) return false;
  if (row.secretId !== null) await q.query('DELETE FROM profile_secrets WHERE id::text = $1', [row.secretId]);
  await touchProfile(q, profileId);
  return true;
}

/**
 * Deletes the layer's sealed values no entry points at: the one a variable replaced, or the one
 * of two concurrent first sets of a secret whose entry the other set won. A value another
 * transaction has not committed yet is invisible here, and commits together with its entry.
 */
async function dropUnlinkedSecrets(q: Queryable, profileId: string): Promise<void> {
  await q.query('DELETE FROM profile_secrets s WHERE s.profile_id::text = $1 AND NOT EXISTS (SELECT 1 FROM profile_entries e WHERE e.secret_id = s.id)', [profileId]);
}

/**
 * Entry writes of one layer take turns (the caller's transaction holds the lock until it ends):
 * two concurrent sets otherwise deadlock between one's sweep of unlinked values and the other's
 * reference to its new value. The profile counter's row (migration 0031) is taken first, as
 * every write to these tables takes it before its own rows: a writer holding the layer while
 * waiting for the counter would deadlock with one holding the counter and waiting for the layer.
 */
async function lockProfile(q: Queryable, profileId: string): Promise<void> {
  await q.query('SELECT 1 FROM profile_version FOR UPDATE');
  await q.query('SELECT 1 FROM profiles WHERE id::text = $1 FOR UPDATE', [profileId]);
}

async function touchProfile(q: Queryable, profileId: string): Promise<void> {
  await q.query('UPDATE profiles SET updated_at = now() WHERE id::text = $1', [profileId]);
}
