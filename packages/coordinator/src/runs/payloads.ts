import { RunStatus, runStatusLabel } from '@trellis/core';
import type { NodeRow, RunRecord, RunSummaryRecord } from '@trellis/store';

export interface QueuedCondition {
  type: 'Queued';
  status: 'True';
  reason: string;
  message: string;
  checkedAt: string;
}

const stamp = (value: Date | string | null): string => (value === null ? '' : typeof value === 'string' ? value : value.toISOString());

/**
 * The contract's run summary, what run lists hold: its fields, who started the run (the run
 * list shows it), and `conditions` only while queued. What only one run's page needs (error,
 * attempt, profile) is in the details: a list of 100 runs is a fifth smaller without it.
 */
export function runSummary(run: RunRecord | RunSummaryRecord, conditions?: QueuedCondition[]) {
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
    triggeredBy: { kind: run.triggeredBy.kind, id: run.triggeredBy.id, name: run.triggeredBy.name },
    ...(run.status === RunStatus.Queued ? { conditions: conditions ?? [] } : {}),
  };
}

/** Details: the summary plus nodes (and handler nodes by kind), and the git commit of a definition that came from repository sync. */
export function runDetails(run: RunRecord, nodes: NodeRow[], conditions?: QueuedCondition[], gitCommit = '') {
  const steps = nodes.filter((n) => n.kind === 'step').map((n) => n.data);
  const handlers = Object.fromEntries(nodes.filter((n) => n.kind === 'handler').map((n) => [n.stepName, n.data]));
  return {
    ...runSummary(run, conditions),
    error: run.error,
    attemptId: run.attemptId,
    fileName: run.fileName,
    profileName: run.profileName,
    profileEntries: run.profileEntries.map((e) => ({ key: e.key, kind: e.kind, layer: e.layer })),
    nodes: steps,
    handlers,
    gitCommit,
  };
}
