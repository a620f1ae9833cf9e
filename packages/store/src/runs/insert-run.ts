import { createHash } from 'node:crypto';
import { AlreadyExistsError, RunStatus, type RunLineage } from '@trellis/core';
import type { Queryable } from '../db/types.js';
import type { NewEvent } from '../events/event-log.js';
import { RUN_COLUMNS, type DispatchTarget, type ProfileEntryMeta, type RunRecord, type TriggeredBy } from './record.js';

/** A top-level run leaves its lineage out: it is its own root and has no parent. */
export interface NewRun extends Partial<RunLineage> {
  dagName: string;
  dagRunId: string;
  fileName: string;
  attemptId: string;
  status: RunStatus;
  params: string;
  queueName: string;
  logFile: string;
  /** The exact YAML the run executes; stored once per content hash. */
  specYaml: string;
  labels: string[];
  trigger: string;
  triggeredBy: TriggeredBy;
  noReuse: boolean;
  profileName?: string;
  /** The profile entries resolved when the run was queued (keys, kinds, layers). */
  profileEntries?: ProfileEntryMeta[];
  dispatchTarget?: DispatchTarget;
  workerSelector?: Record<string, string>;
  /** Run-level variables (ITEM of a `parallel` sub-run); default none. */
  runEnv?: Record<string, string>;
  /** An event recorded with the run by the same statement (the audit record of who started it), only if the run is new. */
  event?: NewEvent;
}

/** A run id is taken: ids are unique per DAG name. */
export class RunExistsError extends AlreadyExistsError {
  constructor(
    readonly dagName: string,
    readonly dagRunId: string,
  ) {
    super(`DAG run ${dagRunId} already exists`, { dagRunId });
  }
}

export function specHash(yaml: string): string {
  return createHash('sha256').update(yaml).digest('hex');
}

/**
 * Records a new run (queued or running) and the definition it runs, in one statement: the
 * definition row is written by a CTE, and the foreign key is checked at the statement's end.
 * The run's `event`, when given, is written by the same statement.
 */
export async function insertRun(q: Queryable, run: NewRun): Promise<RunRecord> {
  const hash = specHash(run.specYaml);
  const event = run.event;
  const rows = await q.query<RunRecord>(
    `WITH spec AS (INSERT INTO dag_specs (hash, yaml) VALUES ($13, $20) ON CONFLICT (hash) DO NOTHING),
     run AS (INSERT INTO runs (dag_name, dag_run_id, file_name, root_dag_run_name, root_dag_run_id, parent_dag_run_name, parent_dag_run_id,
       attempt_id, status, queued_at, params, queue_name, log_file, spec_hash, labels, trigger, no_reuse, profile_name,
       dispatch_target, worker_selector, run_env, triggered_by, profile_entries)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::smallint, CASE WHEN $9::smallint = ${RunStatus.Queued} THEN now() END, $10, $11, $12, $13, $14, $15, $16, $17,
       $18, $19::jsonb, $21::jsonb, $22::jsonb, $23::jsonb)
     ON CONFLICT (dag_name, dag_run_id) DO NOTHING
     RETURNING ${RUN_COLUMNS})${event !== undefined ? `,
     event AS (INSERT INTO event_logs (kind, type, dag_name, dag_run_id, user_id, message, data) SELECT $24::text, $25::text, $26::text, $27::text, $28::text, $29::text, $30::jsonb FROM run)` : ''}
     SELECT * FROM run`,
    [
      run.dagName, run.dagRunId, run.fileName, run.rootDagRunName ?? run.dagName, run.rootDagRunId ?? run.dagRunId,
      run.parentDagRunName ?? '', run.parentDagRunId ?? '', run.attemptId, run.status, run.params, run.queueName, run.logFile,
      hash, run.labels, run.trigger, run.noReuse, run.profileName ?? '',
      run.dispatchTarget ?? 'local', JSON.stringify(run.workerSelector ?? {}), run.specYaml, JSON.stringify(run.runEnv ?? {}),
      // Only these three: a caller's principal also carries its role, which is no part of the record.
      JSON.stringify({ kind: run.triggeredBy.kind, id: run.triggeredBy.id, name: run.triggeredBy.name }),
      JSON.stringify(run.profileEntries ?? []),
      ...(event !== undefined ? [event.kind, event.type, event.dagName ?? '', event.dagRunId ?? '', event.userId ?? '', event.message ?? '', JSON.stringify(event.data ?? {})] : []),
    ],
  );
  const [row] = rows;
  if (row === undefined) throw new RunExistsError(run.dagName, run.dagRunId);
  return row;
}
