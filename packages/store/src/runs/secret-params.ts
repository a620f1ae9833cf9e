import type { Queryable } from '../db/types.js';

/** A run's params in clear (a JSON array of {name, value}) and the secret values they carry. */
export interface SecretParams {
  params: string;
  maskValues: string[];
}

export async function saveSecretParams(q: Queryable, runId: number, secret: SecretParams): Promise<void> {
  await q.query(
    `INSERT INTO run_secret_params (run_id, params, mask_values) VALUES ($1, $2, $3::jsonb)
     ON CONFLICT (run_id) DO NOTHING`,
    [runId, secret.params, JSON.stringify(secret.maskValues)],
  );
}

export async function getSecretParams(q: Queryable, runId: number): Promise<SecretParams | undefined> {
  const rows = await q.query<{ params: string; mask_values: string[] }>('SELECT params, mask_values FROM run_secret_params WHERE run_id = $1', [runId]);
  const [row] = rows;
  return row === undefined ? undefined : { params: row.params, maskValues: row.mask_values };
}
