import type { Task } from '@trellis/core';
import type { Db, RunRecord } from '@trellis/store';
import type { SpecCache } from '../runs/spec-cache.js';
import { executedParams } from '../runs/masked-params.js';

/** What a worker needs to run an admitted run: its identity, the exact definition and its params. */
export async function taskFor(db: Db, specs: SpecCache, run: RunRecord): Promise<Task> {
  const { paramsJson, maskValues } = await executedParams(db, run);
  return {
    ref: { dagName: run.dagName, dagRunId: run.dagRunId, attemptId: run.attemptId },
    rootDagRunName: run.rootDagRunName,
    rootDagRunId: run.rootDagRunId,
    parentDagRunName: run.parentDagRunName,
    parentDagRunId: run.parentDagRunId,
    specYaml: (await specs.yaml(run.specHash)) ?? '',
    fileName: run.fileName,
    paramsJson,
    // Run-level variables recorded with the run (ITEM of a `parallel` sub-run).
    env: run.runEnv,
    secrets: {},
    queuedAt: run.queuedAt?.toISOString() ?? '',
    maskValues,
  };
}
