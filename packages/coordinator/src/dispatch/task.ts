import type { Task } from '@trellis/core';
import { getSpecYaml, type Db, type RunRecord } from '@trellis/store';

/** What a worker needs to run an admitted run: its identity, the exact definition and its params. */
export async function taskFor(db: Db, run: RunRecord): Promise<Task> {
  return {
    ref: { dagName: run.dagName, dagRunId: run.dagRunId, attemptId: run.attemptId },
    rootDagRunName: run.rootDagRunName,
    rootDagRunId: run.rootDagRunId,
    parentDagRunName: run.parentDagRunName,
    parentDagRunId: run.parentDagRunId,
    specYaml: (await getSpecYaml(db, run.specHash)) ?? '',
    fileName: run.fileName,
    paramsJson: run.params,
    env: {},
    secrets: {},
    queuedAt: run.queuedAt?.toISOString() ?? '',
  };
}
