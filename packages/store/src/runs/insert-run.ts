import { createHash } from 'node:crypto';
import { AlreadyExistsError, RunStatus, type RunLineage } from '@trellis/core';
import type { Queryable } from '../db/types.js';
import type { NewEvent } from '../events/event-log.js';
import type { StoredFileKind } from '../files/stored-file-notify.js';
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
  /** Record the run only if the definitions it was made from are still the newest stored (else StaleDefinitionsError). */
  expect?: DefinitionVersions;
}

/**
 * The stored definitions a new run was made from, as a coordinator's caches last saw them: the
 * newest version seen of each stored file kind, and the profile counter its profile entries were
 * resolved at.
 */
export interface DefinitionVersions {
  files: Array<{ kind: StoredFileKind; version: number }>;
  profiles: number;
}

/**
 * A start made from cached definitions found them changed: a file of a kind written since, or a
 * profile changed. Nothing was recorded; the caller reads the definitions again and retries.
 */
export class StaleDefinitionsError extends Error {
  constructor() {
    super('the stored definitions changed since they were read');
  }
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
 * The run's `event`, when given, is written by the same statement. With `expect`, the statement
 * first checks the stored definitions' counters, so a start from cached definitions costs no
 * read of its own; it writes nothing when they moved.
 */
export async function insertRun(q: Queryable, run: NewRun): Promise<RunRecord> {
  const hash = specHash(run.specYaml);
  const event = run.event;
  const expect = run.expect;
  const params: unknown[] = [
    run.dagName, run.dagRunId, run.fileName, run.rootDagRunName ?? run.dagName, run.rootDagRunId ?? run.dagRunId,
    run.parentDagRunName ?? '', run.parentDagRunId ?? '', run.attemptId, run.status, run.params, run.queueName, run.logFile,
    hash, run.labels, run.trigger, run.noReuse, run.profileName ?? '',
    run.dispatchTarget ?? 'local', JSON.stringify(run.workerSelector ?? {}), run.specYaml, JSON.stringify(run.runEnv ?? {}),
    // Only these three: a caller's principal also carries its role, which is no part of the record.
    JSON.stringify({ kind: run.triggeredBy.kind, id: run.triggeredBy.id, name: run.triggeredBy.name }),
    JSON.stringify(run.profileEntries ?? []),
  ];
  const param = (value: unknown): string => `$${params.push(value)}`;
  const fresh = expect === undefined ? 'true' : freshCheck(expect, param);
  const eventCte =
    event === undefined
      ? ''
      : `,
     event AS (INSERT INTO event_logs (kind, type, dag_name, dag_run_id, user_id, message, data)
       SELECT ${param(event.kind)}::text, ${param(event.type)}::text, ${param(event.dagName ?? '')}::text, ${param(event.dagRunId ?? '')}::text,
         ${param(event.userId ?? '')}::text, ${param(event.message ?? '')}::text, ${param(JSON.stringify(event.data ?? {}))}::jsonb FROM run)`;
  const rows = await q.query<RunRecord & { fresh: boolean }>(
    `WITH fresh AS (SELECT ${fresh} AS ok),
     spec AS (INSERT INTO dag_specs (hash, yaml) SELECT $13, $20 FROM fresh WHERE ok ON CONFLICT (hash) DO NOTHING),
     run AS (INSERT INTO runs (dag_name, dag_run_id, file_name, root_dag_run_name, root_dag_run_id, parent_dag_run_name, parent_dag_run_id,
       attempt_id, status, queued_at, params, queue_name, log_file, spec_hash, labels, trigger, no_reuse, profile_name,
       dispatch_target, worker_selector, run_env, triggered_by, profile_entries)
     SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9::smallint, CASE WHEN $9::smallint = ${RunStatus.Queued} THEN now() END, $10, $11, $12, $13, $14, $15, $16, $17,
       $18, $19::jsonb, $21::jsonb, $22::jsonb, $23::jsonb FROM fresh WHERE ok
     ON CONFLICT (dag_name, dag_run_id) DO NOTHING
     RETURNING ${RUN_COLUMNS})${eventCte}
     SELECT run.*, fresh.ok AS fresh FROM fresh LEFT JOIN run ON true`,
    params,
  );
  const [row] = rows;
  if (row?.fresh !== true) throw new StaleDefinitionsError();
  if (row.id == null) throw new RunExistsError(run.dagName, run.dagRunId);
  const { fresh: _fresh, ...record } = row;
  return record;
}

/** True while no kind has a version newer than expected and the profile counter is unchanged. */
function freshCheck(expect: DefinitionVersions, param: (value: unknown) => string): string {
  const kinds = param(expect.files.map((f) => f.kind));
  const versions = param(expect.files.map((f) => f.version));
  return `NOT EXISTS (SELECT 1 FROM unnest(${kinds}::text[], ${versions}::float8[]) AS e(kind, version)
       JOIN stored_file_versions s ON s.kind = e.kind WHERE s.version > e.version)
     AND (SELECT version FROM profile_version) = ${param(expect.profiles)}::bigint`;
}
