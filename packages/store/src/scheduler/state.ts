import { RunStatus } from '@trellis/core';
import type { Queryable } from '../db/types.js';
import { RUN_COLUMNS, type RunRecord } from '../runs/record.js';
import { ACTIVE } from '../db/run-status-sql.js';

export interface SchedulerState {
  lastTick: Date | null;
  paused: boolean;
  pausedAt: Date | null;
  pausedBy: string;
  reason: string;
}

const STATE_COLUMNS = `last_tick AS "lastTick", paused, paused_at AS "pausedAt", paused_by AS "pausedBy", pause_reason AS reason`;

export async function getSchedulerState(q: Queryable): Promise<SchedulerState> {
  const [row] = await q.query<SchedulerState>(`SELECT ${STATE_COLUMNS} FROM scheduler_state WHERE id = 1`);
  return row ?? { lastTick: null, paused: false, pausedAt: null, pausedBy: '', reason: '' };
}

/** In a tick's transaction: the state, locked until commit. */
export async function lockSchedulerState(q: Queryable): Promise<SchedulerState> {
  const [row] = await q.query<SchedulerState>(`SELECT ${STATE_COLUMNS} FROM scheduler_state WHERE id = 1 FOR UPDATE`);
  return row ?? { lastTick: null, paused: false, pausedAt: null, pausedBy: '', reason: '' };
}

export async function setLastTick(q: Queryable, tick: Date): Promise<void> {
  await q.query('UPDATE scheduler_state SET last_tick = $1 WHERE id = 1', [tick]);
}

/** Pauses or resumes; pausing also aborts scheduled runs still waiting in queues. */
export async function setSchedulerPaused(q: Queryable, paused: boolean, by: string, reason: string): Promise<SchedulerState> {
  const [row] = await q.query<SchedulerState>(
    `UPDATE scheduler_state SET paused = $1, paused_at = CASE WHEN $1 THEN now() END, paused_by = CASE WHEN $1 THEN $2 ELSE '' END,
       pause_reason = CASE WHEN $1 THEN $3 ELSE '' END WHERE id = 1 RETURNING ${STATE_COLUMNS}`,
    [paused, by, reason],
  );
  if (paused) {
    await q.query(`UPDATE runs SET status = ${RunStatus.Aborted}, error = 'the scheduler was paused', finished_at = now(), updated_at = now() WHERE status = ${RunStatus.Queued} AND trigger = 'schedule'`);
  }
  return row ?? { lastTick: null, paused, pausedAt: null, pausedBy: by, reason };
}

/** Records a one-off as fired (with the run it made); false if it already was. */
export async function consumeOneOff(q: Queryable, dagName: string, at: string, dagRunId: string): Promise<boolean> {
  const rows = await q.query('INSERT INTO schedule_oneoffs (dag_name, at, dag_run_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING at', [dagName, at, dagRunId]);
  return rows.length === 1;
}

/** Every fired one-off, by DAG. */
export async function consumedOneOffs(q: Queryable): Promise<Map<string, Set<string>>> {
  const rows = await q.query<{ dagName: string; at: string }>('SELECT dag_name AS "dagName", at FROM schedule_oneoffs');
  const out = new Map<string, Set<string>>();
  for (const row of rows) out.set(row.dagName, (out.get(row.dagName) ?? new Set()).add(row.at));
  return out;
}

/** A run of the DAG succeeded after `since` (skip_if_successful). */
export async function succeededSince(q: Queryable, dagName: string, since: Date): Promise<boolean> {
  const rows = await q.query(`SELECT 1 FROM runs WHERE dag_name = $1 AND status = ${RunStatus.Success} AND finished_at > $2 LIMIT 1`, [dagName, since]);
  return rows.length === 1;
}

/** overlap_policy latest: older scheduled runs still queued give way to the new one. */
export async function abortQueuedScheduledRuns(q: Queryable, dagName: string, reason: string): Promise<number> {
  const rows = await q.query(
    `UPDATE runs SET status = ${RunStatus.Aborted}, error = $2, finished_at = now(), updated_at = now() WHERE dag_name = $1 AND status = ${RunStatus.Queued} AND trigger = 'schedule' RETURNING id`,
    [dagName, reason],
  );
  return rows.length;
}

/** Running or waiting runs of a DAG (stop and restart schedules stop them). */
export async function activeRunsOf(q: Queryable, dagName: string): Promise<RunRecord[]> {
  return q.query<RunRecord>(`SELECT ${RUN_COLUMNS} FROM runs WHERE dag_name = $1 AND status IN (${ACTIVE})`, [dagName]);
}
