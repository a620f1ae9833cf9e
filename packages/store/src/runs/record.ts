import type { RunIdentity, RunStatus } from '@trellis/core';

export interface RunRecord extends RunIdentity {
  id: number;
  fileName: string;
  attemptNumber: number;
  status: RunStatus;
  queuedAt: Date | null;
  startedAt: Date | null;
  finishedAt: Date | null;
  params: string;
  queueName: string;
  workerId: string;
  /** The runtime profile the run uses ('' when none): sub-runs and retries keep it. */
  profileName: string;
  /** Keys, kinds and layers of the profile entries its latest attempt resolved; never values. */
  profileEntries: ProfileEntryMeta[];
  logFile: string;
  error: string;
  specHash: string;
  labels: string[];
  trigger: string;
  noReuse: boolean;
  createdAt: Date;
  /** Where the run may execute: the coordinator's local executor, or a remote worker. */
  dispatchTarget: DispatchTarget;
  /** Labels a remote worker must all carry (exact values); empty: any worker. */
  workerSelector: Record<string, string>;
  /** When a remote worker was handed the run, and when it confirmed the claim. */
  dispatchedAt: Date | null;
  ackedAt: Date | null;
  stopRequestedAt: Date | null;
  /** The highest report sequence number applied for the current attempt. */
  reportSeq: number;
  /** Run-level variables the run starts with (ITEM of a `parallel` sub-run); never secrets. */
  runEnv: Record<string, string>;
  /** Who started the run (a sub-run: who started its root); a retry in place names who retried it. */
  triggeredBy: TriggeredBy;
}

/** One effective runtime-profile entry of a run, as the run records it: no value. */
export interface ProfileEntryMeta {
  key: string;
  kind: 'variable' | 'secret';
  layer: 'global' | 'workspace' | 'profile';
}

/** Who started a run: a user, API key or webhook by id and name, `scheduler`, or `anonymous` (auth off). Never a credential. */
export interface TriggeredBy {
  kind: string;
  id: string;
  name: string;
}

export type DispatchTarget = 'local' | 'remote';

/** The select list that maps a runs row onto RunRecord. */
export const RUN_COLUMNS = `id, dag_name AS "dagName", dag_run_id AS "dagRunId", file_name AS "fileName",
  root_dag_run_name AS "rootDagRunName", root_dag_run_id AS "rootDagRunId",
  parent_dag_run_name AS "parentDagRunName", parent_dag_run_id AS "parentDagRunId",
  attempt_id AS "attemptId", attempt_number AS "attemptNumber", status,
  queued_at AS "queuedAt", started_at AS "startedAt", finished_at AS "finishedAt", params,
  queue_name AS "queueName", worker_id AS "workerId", profile_name AS "profileName", profile_entries AS "profileEntries",
  log_file AS "logFile", error, spec_hash AS "specHash", labels, trigger, no_reuse AS "noReuse",
  created_at AS "createdAt", dispatch_target AS "dispatchTarget", worker_selector AS "workerSelector",
  dispatched_at AS "dispatchedAt", acked_at AS "ackedAt", stop_requested_at AS "stopRequestedAt", report_seq AS "reportSeq",
  run_env AS "runEnv", triggered_by AS "triggeredBy"`;

/**
 * What a run list shows of a run: the contract's summary fields and who started it. Timestamps
 * come as RFC 3339 text ('' when unset), formatted by the database: parsing seven timestamps a
 * row into Dates only to format them again was most of a 100-run page's cost.
 */
export interface RunSummaryRecord extends RunIdentity {
  id: number;
  status: RunStatus;
  queuedAt: string;
  startedAt: string;
  finishedAt: string;
  params: string;
  logFile: string;
  triggeredBy: TriggeredBy;
  /** When the run was created, as text: a page's cursor names it. */
  createdAt: string;
}

/** `column` as JavaScript's toISOString writes it (milliseconds, truncated as a Date holds them), '' when NULL. */
const iso = (column: string): string => `coalesce(to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), '')`;

/** The select list that maps a runs row onto RunSummaryRecord. */
export const RUN_SUMMARY_COLUMNS = `id, dag_name AS "dagName", dag_run_id AS "dagRunId",
  root_dag_run_name AS "rootDagRunName", root_dag_run_id AS "rootDagRunId",
  parent_dag_run_name AS "parentDagRunName", parent_dag_run_id AS "parentDagRunId", attempt_id AS "attemptId", status,
  ${iso('queued_at')} AS "queuedAt", ${iso('started_at')} AS "startedAt", ${iso('finished_at')} AS "finishedAt",
  params, log_file AS "logFile", triggered_by AS "triggeredBy", ${iso('created_at')} AS "createdAt"`;
