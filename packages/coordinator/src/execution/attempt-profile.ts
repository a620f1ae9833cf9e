import { toError, workspaceOfLabels } from '@trellis/core';
import { recordProfileEntries, type Db, type RunRecord } from '@trellis/store';
import type { ProfileService, ResolveInput } from '../profiles/profile-service.js';

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

/** The runtime profile of a run cannot be used for this attempt (missing, disabled, or its secrets cannot be opened): the run fails with this message. */
export class AttemptProfileError extends Error {
  override readonly name = 'AttemptProfileError';
}

/** What a run resolves against: its DAG's workspace (label `workspace=<name>`) and the profile it was started with. */
export function resolveInputOf(run: Pick<RunRecord, 'labels' | 'profileName'>): ResolveInput {
  return { workspaceName: workspaceOfLabels(run.labels), profileName: run.profileName === '' ? undefined : run.profileName };
}

/**
 * Resolves Global, workspace and profile entries afresh for this attempt (a retry sees the
 * values of its own time) and records their keys, kinds and layers on the run.
 */
export async function resolveAttemptProfile(db: Db, profiles: ProfileResolver, run: RunRecord): Promise<AttemptProfile> {
  let entries;
  try {
    entries = (await profiles.resolve(resolveInputOf(run))).entries;
  } catch (error) {
    const what = run.profileName !== '' ? `runtime profile ${run.profileName}` : 'the runtime profile defaults';
    throw new AttemptProfileError(`cannot start: ${what}: ${toError(error).message}`);
  }
  await recordProfileEntries(db, run.id, run.attemptId, entries.map(({ key, kind, layer }) => ({ key, kind, layer })));
  const profile: AttemptProfile = { env: {}, secrets: {} };
  for (const entry of entries) (entry.kind === 'secret' ? profile.secrets : profile.env)[entry.key] = entry.value;
  return profile;
}
