import type { RunStatus } from '@trellis/core';
import type { RunRecord } from '@trellis/store';

/** Told when runs start and finish on any executor (the metrics implement it). */
export interface RunObserver {
  started(run: RunRecord): void;
  finished(dagName: string, status: RunStatus, startedAt: Date | null): void;
  /** A worker's log chunks were refused as starting past their stream's stored end: `bytes` of a run's log are lost. */
  logBytesRefused(bytes: number): void;
}
