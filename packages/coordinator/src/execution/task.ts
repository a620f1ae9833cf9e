import { runLineage, type Task } from '@trellis/core';
import { readDotenvFiles } from '@trellis/engine';
import type { Db, RunRecord } from '@trellis/store';
import type { SpecCache } from './spec-cache.js';
import type { InputSealer } from '../runs/masked-params.js';
import { attemptInputs, resolveAttemptProfile, type ProfileResolver } from './attempt-profile.js';

/** The DAG's relative dotenv files beside its file (a stored DAG's, in the DAGs folder); an inline spec has none. */
async function dotenvFilesOf(specs: SpecCache, run: RunRecord, dagsDir: string): Promise<Record<string, string>> {
  if (run.fileName === '') return {};
  const dag = (await specs.select(run.specHash, run.fileName, run.dagName))?.dag;
  return dag !== undefined ? readDotenvFiles(dag.dotenv, dagsDir) : {};
}

/**
 * What a worker needs to run an admitted run: its identity, the exact definition, its params,
 * dotenv files, and this attempt's runtime-profile values (throws UnstartableAttemptError when its
 * profile or sealed inputs cannot be used). The values travel only in the task, over the authenticated channel.
 * `profilesVersion`: the profile counter as the run's admission saw it.
 */
export async function taskFor(db: Db, specs: SpecCache, secrets: { profiles: ProfileResolver; sealer: InputSealer }, run: RunRecord, dagsDir: string, profilesVersion: number): Promise<Task> {
  const { paramsJson, runEnv, maskValues } = await attemptInputs(db, secrets.sealer, run);
  const profile = await resolveAttemptProfile(db, secrets.profiles, run, profilesVersion);
  return {
    ref: { dagName: run.dagName, dagRunId: run.dagRunId, attemptId: run.attemptId },
    ...runLineage(run),
    specYaml: (await specs.yaml(run.specHash)) ?? '',
    fileName: run.fileName,
    paramsJson,
    // The profile's variables under those recorded with the run (ITEM, WEBHOOK_PAYLOAD).
    env: { ...profile.env, ...runEnv },
    secrets: profile.secrets,
    queuedAt: run.queuedAt?.toISOString() ?? '',
    dotenvFiles: await dotenvFilesOf(specs, run, dagsDir),
    maskValues,
  };
}
