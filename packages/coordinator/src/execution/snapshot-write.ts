import { RunStatus, isTerminalRunStatus } from '@trellis/core';
import type { RunSnapshot } from '@trellis/engine';
import type { NodeRow, SnapshotWrite } from '@trellis/store';

/**
 * One engine snapshot (run status and nodes) of the current attempt as a write. The status move
 * is a compare-and-swap from Running/Waiting, so a late, repeated or stale report changes
 * nothing. A worker's report sequence, when given, advances in the same statement.
 */
export function snapshotWrite(runId: number, snapshot: RunSnapshot, reportSeq?: number): SnapshotWrite {
  const terminal = isTerminalRunStatus(snapshot.status);
  return {
    runId,
    attemptId: snapshot.attemptId,
    expected: [RunStatus.Running, RunStatus.Waiting],
    next: snapshot.status === RunStatus.NotStarted ? RunStatus.Running : snapshot.status,
    ...(reportSeq !== undefined ? { reportSeq } : {}),
    ...(terminal ? { finishedAt: snapshot.finishedAt !== '' ? new Date(snapshot.finishedAt) : new Date(), error: snapshot.error } : {}),
    nodes: [
      ...snapshot.nodes.map((data, position): NodeRow => ({ kind: 'step', position, stepName: data.step.name, data })),
      ...Object.entries(snapshot.handlers).map(([kind, data], position): NodeRow => ({ kind: 'handler', position, stepName: kind, data })),
    ],
  };
}
