import { RunStatus, runStatusLabel } from '@trellis/core';
import type { NodeRow, RunRecord } from '@trellis/store';

export interface QueuedCondition {
  type: 'Queued';
  status: 'True';
  reason: string;
  message: string;
  checkedAt: string;
}

const stamp = (value: Date | null): string => (value === null ? '' : value.toISOString());

/** The contract's run summary; `conditions` only while queued. */
export function runSummary(run: RunRecord, conditions?: QueuedCondition[]) {
  return {
    rootDAGRunName: run.rootDagRunName,
    rootDAGRunId: run.rootDagRunId,
    parentDAGRunName: run.parentDagRunName,
    parentDAGRunId: run.parentDagRunId,
    dagRunId: run.dagRunId,
    name: run.dagName,
    status: run.status,
    statusLabel: runStatusLabel(run.status),
    queuedAt: stamp(run.queuedAt),
    startedAt: stamp(run.startedAt),
    finishedAt: stamp(run.finishedAt),
    log: run.logFile,
    params: run.params,
    error: run.error,
    attemptId: run.attemptId,
    triggeredBy: { kind: run.triggeredBy.kind, id: run.triggeredBy.id, name: run.triggeredBy.name },
    profileName: run.profileName,
    profileEntries: run.profileEntries.map((e) => ({ key: e.key, kind: e.kind, layer: e.layer })),
    ...(run.status === RunStatus.Queued ? { conditions: conditions ?? [] } : {}),
  };
}

/** Details: the summary plus nodes (and handler nodes by kind), and the git commit of a definition that came from repository sync. */
export function runDetails(run: RunRecord, nodes: NodeRow[], conditions?: QueuedCondition[], gitCommit = '') {
  const steps = nodes.filter((n) => n.kind === 'step').map((n) => n.data);
  const handlers = Object.fromEntries(nodes.filter((n) => n.kind === 'handler').map((n) => [n.stepName, n.data]));
  return { ...runSummary(run, conditions), nodes: steps, handlers, gitCommit };
}
