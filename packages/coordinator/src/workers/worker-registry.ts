import { isLocalWorkerId } from '../execution/local-executor.js';
import { listWorkers, upsertWorker, type Db, type WorkerRecord, type WorkerRegistration } from '@trellis/store';

export type WorkerHealth = 'healthy' | 'warning' | 'unhealthy';

/** The contract's health bands by heartbeat age: healthy < 5 s, warning 5-15 s, unhealthy beyond. */
export function healthOf(heartbeatAgeMs: number): WorkerHealth {
  if (heartbeatAgeMs < 5000) return 'healthy';
  return heartbeatAgeMs <= 15000 ? 'warning' : 'unhealthy';
}

export interface WorkerView extends WorkerRecord {
  health: WorkerHealth;
  heartbeatAgeMs: number;
}

/** Registered workers: labels kept in memory for polling, everything else in the database. */
export class WorkerRegistry {
  private readonly labels = new Map<string, Record<string, string>>();

  constructor(private readonly db: Db) {}

  async register(worker: WorkerRegistration): Promise<void> {
    await upsertWorker(this.db, worker);
    this.labels.set(worker.id, worker.labels);
  }

  /** Labels of a worker that registered with this coordinator (undefined: it must register). */
  labelsOf(workerId: string): Record<string, string> | undefined {
    return this.labels.get(workerId);
  }

  forget(workerId: string): void {
    this.labels.delete(workerId);
  }

  /** Remote workers only: coordinators' own executors heartbeat in the same table but are not workers to users. */
  async list(): Promise<WorkerView[]> {
    const { workers, now } = await listWorkers(this.db);
    return workers.filter((w) => !isLocalWorkerId(w.id)).map((w) => {
      const heartbeatAgeMs = Math.max(0, now.getTime() - w.lastHeartbeat.getTime());
      return { ...w, heartbeatAgeMs, health: healthOf(heartbeatAgeMs) };
    });
  }
}

/** A worker's labels contain every selector label with the same value. */
export function selectorMatches(selector: Record<string, string>, labels: Record<string, string>): boolean {
  return Object.entries(selector).every(([key, value]) => labels[key] === value);
}
