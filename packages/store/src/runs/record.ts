import type { RunIdentity, RunStatus } from '@trellis/core';
import { QUEUED, STATUS_LABEL } from '../db/run-status-sql.js';

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

/** `created_at` as the text a page's cursor holds. */
export const CREATED_AT_TEXT = iso('created_at');

/** The select list that maps a runs row onto RunSummaryRecord. */
export const RUN_SUMMARY_COLUMNS = `id, dag_name AS "dagName", dag_run_id AS "dagRunId",
  root_dag_run_name AS "rootDagRunName", root_dag_run_id AS "rootDagRunId",
  parent_dag_run_name AS "parentDagRunName", parent_dag_run_id AS "parentDagRunId", attempt_id AS "attemptId", status,
  ${iso('queued_at')} AS "queuedAt", ${iso('started_at')} AS "startedAt", ${iso('finished_at')} AS "finishedAt",
  params, log_file AS "logFile", triggered_by AS "triggeredBy", ${CREATED_AT_TEXT} AS "createdAt"`;

/**
 * A run's summary as the API lists it (the contract's run summary and who started it, with
 * `conditions: []` only while queued: lists never say why a run waits), as JSON text built by
 * the database. A page of 100 runs is then one text value a row for the coordinator to pass on,
 * where decoding 16 columns a row, parsing `triggered_by` and serializing the objects again was
 * most of what a run list cost it. The keys are the API's; its schema checks them in tests.
 * It must read only the runs row: RunSummaryCache keeps it by that row's version.
 */
export const RUN_SUMMARY_JSON = `json_strip_nulls(json_build_object(
  'rootDAGRunName', root_dag_run_name, 'rootDAGRunId', root_dag_run_id,
  'parentDAGRunName', parent_dag_run_name, 'parentDAGRunId', parent_dag_run_id,
  'dagRunId', dag_run_id, 'name', dag_name, 'status', status, 'statusLabel', ${STATUS_LABEL},
  'queuedAt', ${iso('queued_at')}, 'startedAt', ${iso('started_at')}, 'finishedAt', ${iso('finished_at')},
  'log', log_file, 'params', params,
  'triggeredBy', json_build_object('kind', triggered_by->>'kind', 'id', triggered_by->>'id', 'name', triggered_by->>'name'),
  'conditions', CASE WHEN status = ${QUEUED} THEN '[]'::json END))::text`;

/** A run list's page as the API shows it: each run's summary as JSON text. */
export interface RunSummaryPage {
  /** `{...}` a run, newest first. */
  summaries: string[];
  nextCursor?: string;
}
