import type { Queryable } from '../db/types.js';
import type { SealedSecret } from '../profiles/profiles.js';

/**
 * A run's params in clear (a JSON array of {name, value}), the secret values they carry, and its
 * run-level variables in clear when those carry a secret too (`runs.run_env` then shows them masked).
 */
export interface SecretParams {
  params: string;
  maskValues: string[];
  runEnv?: Record<string, string>;
}

/** How a row holds them: sealed under the secrets key (the JSON of SecretParams), or clear where no key is configured. */
export type StoredSecretParams = { form: 'sealed'; sealed: SealedSecret } | { form: 'clear'; secret: SecretParams };

export async function saveSecretParams(q: Queryable, runId: number, stored: StoredSecretParams): Promise<void> {
  const clear = stored.form === 'clear' ? stored.secret : undefined;
  const sealed = stored.form === 'sealed' ? stored.sealed : undefined;
  await q.query(
    `INSERT INTO run_secret_params (run_id, params, mask_values, run_env, sealed_key_id, sealed_nonce, sealed_ciphertext, sealed_auth_tag)
     VALUES ($1, $2, $3::jsonb, $4::jsonb, $5, $6, $7, $8)
     ON CONFLICT (run_id) DO NOTHING`,
    [
      runId, clear?.params ?? null, clear !== undefined ? JSON.stringify(clear.maskValues) : null, clear?.runEnv !== undefined ? JSON.stringify(clear.runEnv) : null,
      sealed?.keyId ?? null, sealed?.nonce ?? null, sealed?.ciphertext ?? null, sealed?.authTag ?? null,
    ],
  );
}

interface Row {
  params: string | null;
  mask_values: string[] | null;
  run_env: Record<string, string> | null;
  keyId: string | null;
  nonce: Uint8Array | null;
  ciphertext: Uint8Array | null;
  authTag: Uint8Array | null;
}

const COLUMNS = 'params, mask_values, run_env, sealed_key_id AS "keyId", sealed_nonce AS nonce, sealed_ciphertext AS ciphertext, sealed_auth_tag AS "authTag"';

/** PGlite returns bytea as Uint8Array, pg as Buffer: one shape for the caller. */
function sealedOf(row: Row): SealedSecret | undefined {
  if (row.keyId === null || row.nonce === null || row.ciphertext === null || row.authTag === null) return undefined;
  return { keyId: row.keyId, nonce: Buffer.from(row.nonce), ciphertext: Buffer.from(row.ciphertext), authTag: Buffer.from(row.authTag) };
}

export async function getSecretParams(q: Queryable, runId: number): Promise<StoredSecretParams | undefined> {
  const [row] = await q.query<Row>(`SELECT ${COLUMNS} FROM run_secret_params WHERE run_id = $1`, [runId]);
  if (row === undefined) return undefined;
  const sealed = sealedOf(row);
  if (sealed !== undefined) return { form: 'sealed', sealed };
  return { form: 'clear', secret: { params: row.params ?? '[]', maskValues: row.mask_values ?? [], ...(row.run_env !== null ? { runEnv: row.run_env } : {}) } };
}

/** Up to `limit` rows sealed under one of `keyIds`: the next batch of a key rotation. */
export async function secretParamsSealedWith(q: Queryable, keyIds: string[], limit: number): Promise<Array<{ runId: number; sealed: SealedSecret }>> {
  if (keyIds.length === 0) return [];
  const rows = await q.query<Row & { runId: string | number }>(
    `SELECT run_id AS "runId", ${COLUMNS} FROM run_secret_params WHERE sealed_key_id = ANY($1::text[]) ORDER BY run_id LIMIT $2`,
    [keyIds, limit],
  );
  return rows.flatMap((row) => {
    const sealed = sealedOf(row);
    return sealed !== undefined ? [{ runId: Number(row.runId), sealed }] : [];
  });
}

/** Replaces a row's sealed form only if it is still the one read (same key and nonce). True when replaced. */
export async function resealSecretParams(q: Queryable, runId: number, expected: { keyId: string; nonce: Buffer }, sealed: SealedSecret): Promise<boolean> {
  const rows = await q.query(
    `UPDATE run_secret_params SET sealed_key_id = $4, sealed_nonce = $5, sealed_ciphertext = $6, sealed_auth_tag = $7
     WHERE run_id = $1 AND sealed_key_id = $2 AND sealed_nonce = $3 RETURNING run_id`,
    [runId, expected.keyId, expected.nonce, sealed.keyId, sealed.nonce, sealed.ciphertext, sealed.authTag],
  );
  return rows.length > 0;
}

/** How many sealed rows each key id seals. */
export async function secretParamsCountsByKey(q: Queryable): Promise<Record<string, number>> {
  const rows = await q.query<{ keyId: string; count: number }>(
    'SELECT sealed_key_id AS "keyId", count(*)::int AS count FROM run_secret_params WHERE sealed_key_id IS NOT NULL GROUP BY sealed_key_id',
  );
  return Object.fromEntries(rows.map((r) => [r.keyId, r.count]));
}
