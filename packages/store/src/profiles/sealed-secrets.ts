import type { Queryable } from '../db/types.js';
import type { SealedSecret } from './profiles.js';

export interface StoredSecret extends SealedSecret {
  id: string;
}

const COLUMNS = `id::text AS id, key_id AS "keyId", nonce, ciphertext, auth_tag AS "authTag"`;

/** PGlite returns bytea as Uint8Array, pg as Buffer: one shape for the caller. */
function normalise(row: StoredSecret): StoredSecret {
  return { id: row.id, keyId: row.keyId, nonce: Buffer.from(row.nonce), ciphertext: Buffer.from(row.ciphertext), authTag: Buffer.from(row.authTag) };
}

export async function getSealedSecrets(q: Queryable, ids: string[]): Promise<StoredSecret[]> {
  if (ids.length === 0) return [];
  return (await q.query<StoredSecret>(`SELECT ${COLUMNS} FROM profile_secrets WHERE id::text = ANY($1::text[])`, [ids])).map(normalise);
}

/** Up to `limit` secrets sealed under one of `keyIds`: the next batch of a rotation. */
export async function secretsSealedWith(q: Queryable, keyIds: string[], limit: number): Promise<StoredSecret[]> {
  if (keyIds.length === 0) return [];
  return (await q.query<StoredSecret>(`SELECT ${COLUMNS} FROM profile_secrets WHERE key_id = ANY($1::text[]) ORDER BY id LIMIT $2`, [keyIds, limit])).map(normalise);
}

/**
 * Replaces a secret's sealed form only if it is still sealed under `expectedKeyId` with the same
 * nonce: a value set meanwhile (already under the current key) is left alone. True when replaced.
 */
export async function resealSecret(q: Queryable, id: string, expected: { keyId: string; nonce: Buffer }, sealed: SealedSecret): Promise<boolean> {
  const rows = await q.query(
    `UPDATE profile_secrets SET key_id = $4, nonce = $5, ciphertext = $6, auth_tag = $7 WHERE id::text = $1 AND key_id = $2 AND nonce = $3 RETURNING id`,
    [id, expected.keyId, expected.nonce, sealed.keyId, sealed.nonce, sealed.ciphertext, sealed.authTag],
  );
  return rows.length > 0;
}

/** How many secrets each key id seals. */
export async function secretCountsByKey(q: Queryable): Promise<Record<string, number>> {
  const rows = await q.query<{ keyId: string; count: number }>(`SELECT key_id AS "keyId", count(*)::int AS count FROM profile_secrets GROUP BY key_id`);
  return Object.fromEntries(rows.map((r) => [r.keyId, r.count]));
}
