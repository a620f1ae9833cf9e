import type { Queryable } from '../db/types.js';

/**
 * A run's params in clear (a JSON array of {name, value}), the secret values they carry, and its
 * run-level variables in clear when those carry a secret too (`runs.run_env` then shows them masked).
 */
export interface SecretParams {
  params: string;
  maskValues: string[];
  runEnv?: Record<string, string>;
}

export async function saveSecretParams(q: Queryable, runId: number, secret: SecretParams): Promise<void> {
  await q.query(
    `INSERT INTO run_secret_params (run_id, params, mask_values, run_env) VALUES ($1, $2, $3::jsonb, $4::jsonb)
     ON CONFLICT (run_id) DO NOTHING`,
    [runId, secret.params, JSON.stringify(secret.maskValues), secret.runEnv !== undefined ? JSON.stringify(secret.runEnv) : null],
  );
}

export async function getSecretParams(q: Queryable, runId: number): Promise<SecretParams | undefined> {
  const rows = await q.query<{ params: string; mask_values: string[]; run_env: Record<string, string> | null }>(
    'SELECT params, mask_values, run_env FROM run_secret_params WHERE run_id = $1',
    [runId],
  );
  const [row] = rows;
  if (row === undefined) return undefined;
  return { params: row.params, maskValues: row.mask_values, ...(row.run_env !== null ? { runEnv: row.run_env } : {}) };
}
