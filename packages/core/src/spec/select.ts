import type { Dag } from '../model/dag.js';
import { loadDag } from './load.js';

export interface SelectedDag {
  dag?: Dag;
  /** The file's local DAGs, callable by name from its steps. */
  localDags: Dag[];
  error?: string;
}

/**
 * Which DAG of a recorded definition a run executes: the file's first document, or the local
 * DAG of that name. The coordinator and every worker resolve a run's definition this one way.
 */
export function selectDag(yaml: string, fileName: string, dagName: string): SelectedDag {
  const loaded = loadDag(yaml, { fileName });
  const localDags = loaded.localDags.flatMap((l) => (l.dag !== undefined ? [l.dag] : []));
  if (loaded.dag === undefined) return { localDags, error: `the recorded definition is invalid: ${loaded.errors.join('; ')}` };
  if (loaded.dag.name === dagName || fileName === dagName) return { dag: loaded.dag, localDags };
  return { dag: localDags.find((d) => d.name === dagName) ?? loaded.dag, localDags };
}
