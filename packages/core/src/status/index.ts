/** Run status integers of the contract ("DAG run status"). */
export const RunStatus = {
  NotStarted: 0,
  Running: 1,
  Failed: 2,
  Aborted: 3,
  Success: 4,
  Queued: 5,
  PartialSuccess: 6,
  Waiting: 7,
  Rejected: 8,
} as const;
export type RunStatus = (typeof RunStatus)[keyof typeof RunStatus];

/** Node (step) status integers of the contract ("Step status"). */
export const NodeStatus = {
  NotStarted: 0,
  Running: 1,
  Failed: 2,
  Cancelled: 3,
  Success: 4,
  Skipped: 5,
} as const;
export type NodeStatus = (typeof NodeStatus)[keyof typeof NodeStatus];

const runLabels: Record<RunStatus, string> = {
  0: 'not_started',
  1: 'running',
  2: 'failed',
  3: 'aborted',
  4: 'succeeded',
  5: 'queued',
  6: 'partially_succeeded',
  7: 'waiting',
  8: 'rejected',
};

const nodeLabels: Record<NodeStatus, string> = {
  0: 'not_started',
  1: 'running',
  2: 'failed',
  3: 'cancelled',
  4: 'succeeded',
  5: 'skipped',
};

export function runStatusLabel(status: RunStatus): string {
  return runLabels[status];
}

export function nodeStatusLabel(status: NodeStatus): string {
  return nodeLabels[status];
}

export function isRunStatus(value: unknown): value is RunStatus {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 8;
}

export function isNodeStatus(value: unknown): value is NodeStatus {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 5;
}

/** Terminal run statuses: nothing moves a run out of these except a retry (a new attempt). */
export const TERMINAL_RUN_STATUSES: readonly RunStatus[] = [RunStatus.Failed, RunStatus.Aborted, RunStatus.Success, RunStatus.PartialSuccess, RunStatus.Rejected];

/** Active runs hold a queue slot or a worker: Running and Waiting (an approval holds its slot). */
export const ACTIVE_RUN_STATUSES: readonly RunStatus[] = [RunStatus.Running, RunStatus.Waiting];

/** Runs not over yet: active, or queued for a slot. */
export const UNFINISHED_RUN_STATUSES: readonly RunStatus[] = [RunStatus.Running, RunStatus.Queued, RunStatus.Waiting];

export function isTerminalRunStatus(status: RunStatus): boolean {
  return TERMINAL_RUN_STATUSES.includes(status);
}

export function isActiveRunStatus(status: RunStatus): boolean {
  return ACTIVE_RUN_STATUSES.includes(status);
}

/** The `metadata.status` word of the outputs endpoint. */
export function outputsStatusWord(status: RunStatus): string {
  switch (status) {
    case RunStatus.Success:
      return 'succeeded';
    case RunStatus.PartialSuccess:
      return 'partially_succeeded';
    case RunStatus.Failed:
      return 'failed';
    case RunStatus.Rejected:
      return 'rejected';
    case RunStatus.Aborted:
      return 'aborted';
    default:
      return runLabels[status];
  }
}
