import type { ResolvedParams } from '@trellis/core';
import { MASK, SecretMasker } from '@trellis/engine';
import { getSecretParams, insertRun, saveSecretParams, type Db, type NewRun, type Queryable, type RunRecord, type SecretParams, type StoredSecretParams } from '@trellis/store';
import type { SecretKeyring } from '../profiles/secret-keyring.js';

/** What seals a run's clear inputs at rest: the secret store's keyring. */
export type InputSealer = Pick<SecretKeyring, 'currentKeyId' | 'seal' | 'open'>;

/** The associated data of a run's sealed inputs: they open only for that run. */
export function runInputsAad(runId: number): string {
  return `run-inputs:${runId}`;
}

/** Sealed when the coordinator holds a secrets key; clear (as rows were before sealing) without one. */
function stored(sealer: InputSealer, runId: number, secret: SecretParams): StoredSecretParams {
  if (sealer.currentKeyId === undefined) return { form: 'clear', secret };
  return { form: 'sealed', sealed: sealer.seal(JSON.stringify(secret), runInputsAad(runId)) };
}

/** A run's params as its record shows them: the secret values a parent handed in, masked (value by value, not in the JSON text, where escaping could hide one). */
export function maskedParamsJson(params: ResolvedParams, maskValues: string[]): string {
  const masker = new SecretMasker(maskValues);
  return JSON.stringify(params.map((param) => ({ ...param, value: masker.mask(param.value) })));
}

function maskedEnv(env: Record<string, string>, maskValues: string[]): Record<string, string> {
  const masker = new SecretMasker(maskValues);
  return Object.fromEntries(Object.entries(env).map(([name, value]) => [name, masker.mask(value)]));
}

/**
 * Records a run whose params or run-level variables (ITEM) may carry a parent's secrets: a
 * sub-run, or a new run made from one. `runs.params` and `runs.run_env` show them masked, and
 * the clear ones wait in run_secret_params, sealed, for whoever executes the run. `q`: one transaction.
 */
export async function insertMaskedRun(q: Queryable, sealer: InputSealer, run: Omit<NewRun, 'params'>, params: ResolvedParams, maskValues: string[]): Promise<RunRecord> {
  const shown = maskedParamsJson(params, maskValues);
  const clear = JSON.stringify(params);
  const env = run.runEnv ?? {};
  const shownEnv = maskedEnv(env, maskValues);
  const envHasSecret = JSON.stringify(shownEnv) !== JSON.stringify(env);
  if (shown === clear && !envHasSecret) return insertRun(q, { ...run, params: clear });
  const record = await insertRun(q, { ...run, params: shown, runEnv: shownEnv });
  await saveSecretParams(q, record.id, stored(sealer, record.id, { params: clear, maskValues, ...(envHasSecret ? { runEnv: env } : {}) }));
  return record;
}

export function insertSubRun(db: Db, sealer: InputSealer, run: Omit<NewRun, 'params'>, params: ResolvedParams, maskValues: string[]): Promise<RunRecord> {
  return db.transaction((tx) => insertMaskedRun(tx, sealer, run, params, maskValues));
}

/** What a run executes with: its params and run-level variables in clear, and the values it must mask. */
export interface ExecutedInputs {
  paramsJson: string;
  runEnv: Record<string, string>;
  maskValues: string[];
}

/** A run's inputs in clear; only a run whose record shows a mask can have secret ones (a sub-run, or a retry or reschedule of one). */
export async function executedInputs(db: Db, sealer: InputSealer, run: RunRecord): Promise<ExecutedInputs> {
  const masked = run.params.includes(MASK) || Object.values(run.runEnv).some((value) => value.includes(MASK));
  const row = masked ? await getSecretParams(db, run.id) : undefined;
  if (row === undefined) return { paramsJson: run.params, runEnv: run.runEnv, maskValues: [] };
  const secret = row.form === 'clear' ? row.secret : (JSON.parse(sealer.open(row.sealed, runInputsAad(run.id))) as SecretParams);
  return { paramsJson: secret.params, runEnv: secret.runEnv ?? run.runEnv, maskValues: secret.maskValues };
}
