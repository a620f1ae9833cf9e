import type { RunIdentity } from '@trellis/core';
import type { Queryable } from '../db/types.js';
import { ACTIVE } from '../db/run-status-sql.js';

/** A running task as a worker reports it in its heartbeat. */
export interface RunningTaskRow extends RunIdentity {
  startedAt: string;
}

export interface WorkerRecord {
  id: string;
  labels: Record<string, string>;
  pollers: number;
  pollersBusy: number;
  hostname: string;
  version: string;
  running: RunningTaskRow[];
  registeredAt: Date;
  lastHeartbeat: Date;
}

const WORKER_COLUMNS = `id, labels, pollers, pollers_busy AS "pollersBusy", hostname, version, running,
  registered_at AS "registeredAt", last_heartbeat AS "lastHeartbeat"`;

export interface WorkerRegistration {
  id: string;
  labels: Record<string, string>;
  pollers: number;
  hostname: string;
  version: string;
}

/** Registers a worker, or refreshes it when it comes back with the same id (labels may change). */
export async function upsertWorker(q: Queryable, worker: WorkerRegistration): Promise<void> {
  await q.query(
    `INSERT INTO workers (id, labels, pollers, hostname, version) VALUES ($1, $2::jsonb, $3, $4, $5)
     ON CONFLICT (id) DO UPDATE SET labels = EXCLUDED.labels, pollers = EXCLUDED.pollers, hostname = EXCLUDED.hostname,
       version = EXCLUDED.version, registered_at = now(), last_heartbeat = now()`,
    [worker.id, JSON.stringify(worker.labels), worker.pollers, worker.hostname, worker.version],
  );
}

/** Records a heartbeat; false when the worker is unknown (it must register again). */
export async function recordHeartbeat(q: Queryable, id: string, running: RunningTaskRow[], pollers: number, busy: number): Promise<boolean> {
  const rows = await q.query(
    'UPDATE workers SET last_heartbeat = now(), running = $2::jsonb, pollers = $3, pollers_busy = $4 WHERE id = $1 RETURNING id',
    [id, JSON.stringify(running), pollers, busy],
  );
  return rows.length === 1;
}

/** Every registered worker, with the database's clock so heartbeat ages do not depend on this host's. */
export async function listWorkers(q: Queryable): Promise<{ workers: WorkerRecord[]; now: Date }> {
  const workers = await q.query<WorkerRecord>(`SELECT ${WORKER_COLUMNS} FROM workers ORDER BY id`);
  const [clock] = await q.query<{ now: Date }>('SELECT now() AS now');
  return { workers, now: clock?.now ?? new Date() };
}

/** Forgets workers silent for longer than `olderThanSec` that run nothing; returns their ids. */
export async function pruneWorkers(q: Queryable, olderThanSec: number): Promise<string[]> {
  const rows = await q.query<{ id: string }>(
    `DELETE FROM workers w WHERE last_heartbeat < now() - make_interval(secs => $1)
       AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.worker_id = w.id AND r.status IN (${ACTIVE})) RETURNING id`,
    [olderThanSec],
  );
  return rows.map((r) => r.id);
}

/** Other coordinators alive on this database (their executors heartbeat as `local:<id>` workers). */
export async function countLiveCoordinators(q: Queryable, exceptWorkerId: string, staleSec: number): Promise<number> {
  const [row] = await q.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM workers WHERE id LIKE 'local:%' AND id <> $1 AND last_heartbeat > now() - make_interval(secs => $2)",
    [exceptWorkerId, staleSec],
  );
  return row?.n ?? 0;
}
