import type { RunStatus } from '@trellis/core';
import type { Queryable } from '../db/types.js';
import { ACTIVE } from '../db/run-status-sql.js';

export interface StatusChange {
  runId: number;
  attemptId: string;
  /** The move happens only from one of these statuses (compare-and-swap). */
  expected: RunStatus[];
  next: RunStatus;
  startedAt?: Date;
  finishedAt?: Date;
  error?: string;
  workerId?: string;
}

/**
 * Compare-and-swap on (run, attempt, expected status): a late or repeated report, or one from
 * a stale attempt, changes nothing and returns false.
 */
export async function updateRunStatus(q: Queryable, change: StatusChange): Promise<boolean> {
  const rows = await q.query(
    `UPDATE runs SET status = $4,
       started_at = COALESCE($5, started_at), finished_at = COALESCE($6, finished_at),
       error = COALESCE($7, error), worker_id = COALESCE($8, worker_id), updated_at = now()
     WHERE id = $1 AND attempt_id = $2 AND status = ANY($3::smallint[])
     RETURNING id`,
    [change.runId, change.attemptId, change.expected, change.next, change.startedAt ?? null, change.finishedAt ?? null, change.error ?? null, change.workerId ?? null],
  );
  return rows.length === 1;
}

export interface NodeRow {
  kind: 'step' | 'handler';
  position: number;
  stepName: string;
  data: unknown;
}

export interface SnapshotWrite {
  runId: number;
  attemptId: string;
  /** The move happens only from one of these statuses (compare-and-swap). */
  expected: RunStatus[];
  next: RunStatus;
  finishedAt?: Date;
  error?: string;
  nodes: NodeRow[];
  /**
   * A worker's report sequence applied with this snapshot, advanced in the same statement; a
   * snapshot whose sequence was applied already (a resend) writes nothing.
   */
  reportSeq?: number;
}

/**
 * The CTEs `moved` (the status compare-and-swap) and `nodes` (the nodes upserted by position,
 * only if the run moved) of one snapshot write; `param` adds a value and answers its
 * placeholder, and `when` (SQL) further conditions the move. Shared by writeSnapshot and by the
 * statement that stores a run's logs with its snapshot (appendOwnLogChunks).
 */
export function snapshotCtes(write: SnapshotWrite, param: (value: unknown) => string, when = 'true'): string {
  const [runId, attemptId, expected, next, finishedAt, error, reportSeq] = [
    param(write.runId), param(write.attemptId), param(write.expected), param(write.next), param(write.finishedAt ?? null), param(write.error ?? null), param(write.reportSeq ?? null),
  ];
  const [kinds, positions, names, data] = [param(write.nodes.map((n) => n.kind)), param(write.nodes.map((n) => n.position)), param(write.nodes.map((n) => n.stepName)), param(write.nodes.map((n) => JSON.stringify(n.data)))];
  return `moved AS (
       UPDATE runs SET status = ${next}, finished_at = COALESCE(${finishedAt}, finished_at), error = COALESCE(${error}, error),
         report_seq = GREATEST(report_seq, COALESCE(${reportSeq}, report_seq)), updated_at = now()
       WHERE id = ${runId} AND attempt_id = ${attemptId} AND status = ANY(${expected}::smallint[]) AND (${reportSeq}::bigint IS NULL OR report_seq < ${reportSeq}) AND ${when} RETURNING id
     ), nodes AS (
       INSERT INTO run_nodes (run_id, kind, position, step_name, data)
       SELECT moved.id, t.kind, t.position, t.step_name, t.data
       FROM moved, unnest(${kinds}::text[], ${positions}::int[], ${names}::text[], ${data}::jsonb[]) AS t(kind, position, step_name, data)
       ON CONFLICT (run_id, kind, position) DO UPDATE SET step_name = EXCLUDED.step_name, data = EXCLUDED.data
     )`;
}

/** A placeholder allocator over `params`: each value gets the next `$n`. */
export function paramsInto(params: unknown[]): (value: unknown) => string {
  return (value) => `$${params.push(value)}`;
}

/**
 * One engine snapshot in one statement: the status compare-and-swap and, only if it moved,
 * the nodes upserted by position (positions are stable within an attempt; a new attempt
 * starts with none). Returns whether the run moved; a stale or late report writes nothing.
 */
export async function writeSnapshot(q: Queryable, write: SnapshotWrite): Promise<boolean> {
  const params: unknown[] = [];
  const rows = await q.query<{ n: number }>(`WITH ${snapshotCtes(write, paramsInto(params))} SELECT count(*)::int AS n FROM moved`, params);
  return rows[0]?.n === 1;
}

export async function getNodes(q: Queryable, runId: number): Promise<NodeRow[]> {
  return q.query<NodeRow>('SELECT kind, position, step_name AS "stepName", data FROM run_nodes WHERE run_id = $1 ORDER BY kind DESC, position', [runId]);
}

/** A manual change of one step's status (the step-status endpoint). */
export async function setNodeData(q: Queryable, runId: number, stepName: string, data: unknown): Promise<boolean> {
  const rows = await q.query("UPDATE run_nodes SET data = $3 WHERE run_id = $1 AND kind = 'step' AND step_name = $2 RETURNING run_id", [runId, stepName, JSON.stringify(data)]);
  return rows.length > 0;
}

export async function saveOutputs(q: Queryable, runId: number, metadata: unknown, outputs: unknown): Promise<void> {
  await q.query(
    'INSERT INTO run_outputs (run_id, metadata, outputs) VALUES ($1, $2, $3) ON CONFLICT (run_id) DO UPDATE SET metadata = EXCLUDED.metadata, outputs = EXCLUDED.outputs',
    [runId, JSON.stringify(metadata), JSON.stringify(outputs)],
  );
}

/**
 * A worker's outputs for its attempt, stored only while that attempt is the run's current one
 * and the run has not ended (a worker reports outputs just before its final status); false
 * when they were refused.
 */
export async function saveAttemptOutputs(q: Queryable, runId: number, attemptId: string, metadata: unknown, outputs: unknown): Promise<boolean> {
  const rows = await q.query(
    `INSERT INTO run_outputs (run_id, metadata, outputs)
     SELECT id, $3, $4 FROM runs WHERE id = $1 AND attempt_id = $2 AND status IN (${ACTIVE})
     ON CONFLICT (run_id) DO UPDATE SET metadata = EXCLUDED.metadata, outputs = EXCLUDED.outputs
     RETURNING run_id`,
    [runId, attemptId, JSON.stringify(metadata), JSON.stringify(outputs)],
  );
  return rows.length === 1;
}

export async function getOutputs(q: Queryable, runId: number): Promise<{ metadata: unknown; outputs: unknown } | undefined> {
  const [row] = await q.query<{ metadata: unknown; outputs: unknown }>('SELECT metadata, outputs FROM run_outputs WHERE run_id = $1', [runId]);
  return row;
}

/** A run the executor started directly (local sub-DAG runs): who runs it, and since when. */
export async function markStarted(q: Queryable, runId: number, workerId: string): Promise<void> {
  await q.query("UPDATE runs SET worker_id = $2, started_at = COALESCE(started_at, now()), acked_at = COALESCE(acked_at, now()) WHERE id = $1", [runId, workerId]);
}
