import { NotFoundError } from '@trellis/core';
import type { DagIndex, IndexedDag } from './dag-index.js';

/** The scheduler's view of definitions: next runs (pending one-offs included, suspended DAGs none) and suspension changes. */
export interface DagSchedule {
  nextRun(entry: IndexedDag): string;
  setSuspended(name: string, suspended: boolean): void;
}

/** The indexed definition of a file name, or the contract's not-found. */
export function requireDag(index: DagIndex, fileName: string): IndexedDag {
  const entry = index.get(fileName);
  if (entry === undefined) throw new NotFoundError('DAG not found', { fileName });
  return entry;
}
