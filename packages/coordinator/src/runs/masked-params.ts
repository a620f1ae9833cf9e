import type { ResolvedParams } from '@trellis/core';
import { SecretMasker } from '@trellis/engine';
import { getSecretParams, insertRun, saveSecretParams, type Db, type NewRun, type RunRecord } from '@trellis/store';

/** A run's params as its record shows them: the secret values a parent handed in, masked (value by value, not in the JSON text, where escaping could hide one). */
export function maskedParamsJson(params: ResolvedParams, maskValues: string[]): string {
  const masker = new SecretMasker(maskValues);
  return JSON.stringify(params.map((param) => ({ ...param, value: masker.mask(param.value) })));
}

/**
 * Records a sub-run whose params may carry its parent's secrets: `runs.params` shows them
 * masked, and the params in clear wait in run_secret_params for whoever executes the run.
 */
export async function insertSubRun(db: Db, run: Omit<NewRun, 'params'>, params: ResolvedParams, maskValues: string[]): Promise<RunRecord> {
  const shown = maskedParamsJson(params, maskValues);
  const clear = JSON.stringify(params);
  if (shown === clear) return insertRun(db, { ...run, params: clear });
  return db.transaction(async (tx) => {
    const record = await insertRun(tx, { ...run, params: shown });
    await saveSecretParams(tx, record.id, { params: clear, maskValues });
    return record;
  });
}

/** The params a run executes with (in clear) and the values it must mask; only sub-runs can have secret ones. */
export async function executedParams(db: Db, run: RunRecord): Promise<{ paramsJson: string; maskValues: string[] }> {
  const secret = run.parentDagRunId !== '' ? await getSecretParams(db, run.id) : undefined;
  return secret !== undefined ? { paramsJson: secret.params, maskValues: secret.maskValues } : { paramsJson: run.params, maskValues: [] };
}
