import { toError, workspaceOfLabels } from '@trellis/core';
import { isConnectionError, recordProfileEntries, type Db, type ProfileEntryMeta, type RunRecord } from '@trellis/store';
import type { ProfileService, ResolvedEntry, ResolveInput } from '../profiles/profile-service.js';
import { executedInputs, type ExecutedInputs, type InputSealer } from '../runs/masked-params.js';

/** What an attempt resolves its runtime-profile entries with. */
export type ProfileResolver = Pick<ProfileService, 'resolve'>;

/**
 * One attempt's profile values: variables (run-level env vars) and secrets (env vars the run
 * masks). They live in memory only: in the engine's options, or in the task a worker is sent.
 */
export interface AttemptProfile {
  env: Record<string, string>;
  secrets: Record<string, string>;
}

/**
 * An attempt cannot start: its runtime profile cannot be used (missing, disabled, a secret that
 * does not open) or its sealed inputs do not open. The run fails with this message. A database
 * that cannot be reached says nothing about the attempt: that error passes through unwrapped.
 */
export class UnstartableAttemptError extends Error {
  override readonly name = 'UnstartableAttemptError';
}

/** A run's clear inputs, or UnstartableAttemptError when they are sealed under a key this coordinator does not hold. */
export async function attemptInputs(db: Db, sealer: InputSealer, run: RunRecord): Promise<ExecutedInputs> {
  try {
    return await executedInputs(db, sealer, run);
  } catch (error) {
    if (isConnectionError(error)) throw error;
    throw new UnstartableAttemptError(`cannot start: the run's inputs cannot be opened: ${toError(error).message}`);
  }
}

/** What a run resolves against: its DAG's workspace (label `workspace=<name>`) and the profile it was started with. */
export function resolveInputOf(run: Pick<RunRecord, 'labels' | 'profileName'>): ResolveInput {
  return { workspaceName: workspaceOfLabels(run.labels), profileName: run.profileName === '' ? undefined : run.profileName };
}

/**
 * Resolves Global, workspace and profile entries afresh for this attempt (a retry sees the
 * values of its own time) and records their keys, kinds and layers on the run. `asOf`: the
 * profile counter as the run's admission saw it (see ProfileService.resolve).
 */
export async function resolveAttemptProfile(db: Db, profiles: ProfileResolver, run: RunRecord, asOf?: number): Promise<AttemptProfile> {
  let entries: ResolvedEntry[];
  try {
    entries = (await profiles.resolve(resolveInputOf(run), db, asOf)).entries;
  } catch (error) {
    if (isConnectionError(error)) throw error;
    const what = run.profileName !== '' ? `runtime profile ${run.profileName}` : 'the runtime profile defaults';
    throw new UnstartableAttemptError(`cannot start: ${what}: ${toError(error).message}`);
  }
  const recorded = entries.map(({ key, kind, layer }) => ({ key, kind, layer }));
  // Usually what the enqueue recorded already: the write is left out, a statement per run.
  if (!sameEntries(run.profileEntries, recorded)) await recordProfileEntries(db, run.id, run.attemptId, recorded);
  const profile: AttemptProfile = { env: {}, secrets: {} };
  for (const entry of entries) (entry.kind === 'secret' ? profile.secrets : profile.env)[entry.key] = entry.value;
  return profile;
}

function sameEntries(a: ProfileEntryMeta[], b: ProfileEntryMeta[]): boolean {
  return a.length === b.length && a.every((entry, i) => entry.key === b[i]?.key && entry.kind === b[i]?.kind && entry.layer === b[i]?.layer);
}
