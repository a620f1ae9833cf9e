import type { Queryable } from '../db/types.js';
import { isUniqueViolation, NameTakenError } from './unique.js';

export interface ApiKeyRecord {
  id: string;
  name: string;
  description: string;
  role: string;
  keyPrefix: string;
  createdBy: string;
  createdAt: Date;
  updatedAt: Date;
  lastUsedAt: Date | null;
}

/** A key as the authenticator caches it: its hash and what it grants. */
export interface ApiKeyCredential {
  id: string;
  name: string;
  role: string;
  keyHash: string;
}

export interface NewApiKey {
  id: string;
  name: string;
  description: string;
  role: string;
  keyHash: string;
  keyPrefix: string;
  createdBy: string;
}

export interface ApiKeyChange {
  name?: string;
  description?: string;
  role?: string;
}

const COLUMNS = `id::text AS id, name, description, role, key_prefix AS "keyPrefix", created_by AS "createdBy",
  created_at AS "createdAt", updated_at AS "updatedAt", last_used_at AS "lastUsedAt"`;

/** Throws NameTakenError when a key of that name exists. */
export async function insertApiKey(q: Queryable, key: NewApiKey): Promise<ApiKeyRecord> {
  const [row] = await q.query<ApiKeyRecord>(
    `INSERT INTO api_keys (id, name, description, role, key_hash, key_prefix, created_by) VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (name) DO NOTHING RETURNING ${COLUMNS}`,
    [key.id, key.name, key.description, key.role, key.keyHash, key.keyPrefix, key.createdBy],
  );
  if (row === undefined) throw new NameTakenError(`an API key named ${key.name}`);
  return row;
}

export async function listApiKeys(q: Queryable): Promise<ApiKeyRecord[]> {
  return q.query<ApiKeyRecord>(`SELECT ${COLUMNS} FROM api_keys ORDER BY name`);
}

export async function getApiKey(q: Queryable, id: string): Promise<ApiKeyRecord | undefined> {
  const [row] = await q.query<ApiKeyRecord>(`SELECT ${COLUMNS} FROM api_keys WHERE id::text = $1`, [id]);
  return row;
}

/** Every key's hash and grant: few rows, read whole by the authenticator's cache. */
export async function listApiKeyCredentials(q: Queryable): Promise<ApiKeyCredential[]> {
  return q.query<ApiKeyCredential>('SELECT id::text AS id, name, role, key_hash AS "keyHash" FROM api_keys');
}

/** Only the given fields change; undefined when no such key; NameTakenError on a duplicate name. */
export async function updateApiKey(q: Queryable, id: string, change: ApiKeyChange): Promise<ApiKeyRecord | undefined> {
  try {
    const [row] = await q.query<ApiKeyRecord>(
      `UPDATE api_keys SET name = COALESCE($2, name), description = COALESCE($3, description), role = COALESCE($4, role), updated_at = now()
       WHERE id::text = $1 RETURNING ${COLUMNS}`,
      [id, change.name ?? null, change.description ?? null, change.role ?? null],
    );
    return row;
  } catch (error) {
    if (isUniqueViolation(error)) throw new NameTakenError(`an API key named ${change.name ?? ''}`);
    throw error;
  }
}

export async function deleteApiKey(q: Queryable, id: string): Promise<ApiKeyRecord | undefined> {
  const [row] = await q.query<ApiKeyRecord>(`DELETE FROM api_keys WHERE id::text = $1 RETURNING ${COLUMNS}`, [id]);
  return row;
}

/** Last-use times gathered in memory, written in one statement; an older time never overwrites a newer one. */
export async function touchApiKeys(q: Queryable, used: ReadonlyMap<string, Date>): Promise<void> {
  if (used.size === 0) return;
  await q.query(
    `UPDATE api_keys SET last_used_at = GREATEST(COALESCE(api_keys.last_used_at, u.at), u.at)
     FROM (SELECT unnest($1::text[]) AS id, unnest($2::timestamptz[]) AS at) u WHERE api_keys.id::text = u.id`,
    [[...used.keys()], [...used.values()].map((d) => d.toISOString())],
  );
}
