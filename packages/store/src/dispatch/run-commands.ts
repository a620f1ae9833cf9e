import type { Queryable } from '../db/types.js';
import type { AttemptRef } from './leases.js';
import { ACTIVE } from '../db/run-status-sql.js';

export interface RunCommand {
  ref: AttemptRef;
  kind: 'approve' | 'reject';
  stepName: string;
  inputs: Record<string, string>;
  reason: string;
}

/** Records a decision for the current attempt of a run that waits on a remote worker. */
export async function queueRunCommand(q: Queryable, runId: number, attemptId: string, command: Omit<RunCommand, 'ref'>): Promise<void> {
  await q.query('INSERT INTO run_commands (run_id, attempt_id, kind, step_name, inputs, reason) VALUES ($1, $2, $3, $4, $5, $6)', [
    runId, attemptId, command.kind, command.stepName, JSON.stringify(command.inputs), command.reason,
  ]);
}

/**
 * Takes the decisions for the attempts a worker runs, oldest first: each is handed out once.
 * Decisions for attempts that are no longer current are dropped with them.
 */
export async function takeRunCommands(q: Queryable, workerId: string): Promise<RunCommand[]> {
  const rows = await q.query<{ dagName: string; dagRunId: string; attemptId: string; kind: 'approve' | 'reject'; stepName: string; inputs: Record<string, string>; reason: string }>(
    `WITH taken AS (
       DELETE FROM run_commands c USING runs r
       WHERE c.run_id = r.id AND r.worker_id = $1 AND r.status IN (${ACTIVE})
       RETURNING c.id, r.dag_name, r.dag_run_id, c.attempt_id, r.attempt_id AS current_attempt, c.kind, c.step_name, c.inputs, c.reason
     )
     SELECT dag_name AS "dagName", dag_run_id AS "dagRunId", attempt_id AS "attemptId", kind, step_name AS "stepName", inputs, reason
     FROM taken WHERE attempt_id = current_attempt ORDER BY id`,
    [workerId],
  );
  return rows.map((r) => ({ ref: { dagName: r.dagName, dagRunId: r.dagRunId, attemptId: r.attemptId }, kind: r.kind, stepName: r.stepName, inputs: r.inputs, reason: r.reason }));
}
