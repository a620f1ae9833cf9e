/** One attempt of one run: what fences reports, acks and log chunks (TaskRef on the wire). */
export interface AttemptIdentity {
  dagName: string;
  dagRunId: string;
  attemptId: string;
}

/**
 * Where a run sits in its tree of sub-DAG runs: the root run (itself for a top-level run) and
 * the direct parent ('' for a top-level run). The Task and RunningTask messages carry these
 * four fields beside their TaskRef.
 */
export interface RunLineage {
  rootDagRunName: string;
  rootDagRunId: string;
  parentDagRunName: string;
  parentDagRunId: string;
}

/** An attempt and its place in the tree: what the engine stamps on every status snapshot. */
export interface RunIdentity extends AttemptIdentity, RunLineage {}

/** The lineage fields of anything that carries them (a task, a run record), and nothing else. */
export function runLineage(source: RunLineage): RunLineage {
  return { rootDagRunName: source.rootDagRunName, rootDagRunId: source.rootDagRunId, parentDagRunName: source.parentDagRunName, parentDagRunId: source.parentDagRunId };
}

/** The identity of the attempt a task (or a RunningTask) names. */
export function taskIdentity(task: RunLineage & { ref: AttemptIdentity }): RunIdentity {
  return { dagName: task.ref.dagName, dagRunId: task.ref.dagRunId, attemptId: task.ref.attemptId, ...runLineage(task) };
}
