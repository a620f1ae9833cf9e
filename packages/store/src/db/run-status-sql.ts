import { ACTIVE_RUN_STATUSES, RunStatus, runStatusLabel, TERMINAL_RUN_STATUSES, UNFINISHED_RUN_STATUSES } from '@trellis/core';

// Run statuses as SQL text, from core's enum and its named sets. They are interpolated, not
// bound as parameters: they are integers of our own, and a literal list lets the planner match
// the partial indexes built on them (`WHERE status IN (1, 7)`, `WHERE status = 5`), which a
// generic plan over a parameter cannot. Migrations keep their literals: they never change.

const list = (statuses: readonly RunStatus[]): string => statuses.join(', ');

/** `status IN (${ACTIVE})`: Running, Waiting. */
export const ACTIVE = list(ACTIVE_RUN_STATUSES);
/** `status IN (${TERMINAL})`: Failed, Aborted, Success, PartialSuccess, Rejected. */
export const TERMINAL = list(TERMINAL_RUN_STATUSES);
/** `status IN (${UNFINISHED})`: Running, Queued, Waiting. */
export const UNFINISHED = list(UNFINISHED_RUN_STATUSES);

export const { Running: RUNNING, Failed: FAILED, Aborted: ABORTED, Success: SUCCESS, Queued: QUEUED } = RunStatus;

/** `${STATUS_LABEL}`: the run's status as core labels it (`succeeded`, ...), for payloads the database builds. */
export const STATUS_LABEL = `CASE status ${Object.values(RunStatus)
  .map((status) => `WHEN ${status} THEN '${runStatusLabel(status)}'`)
  .join(' ')} END`;
