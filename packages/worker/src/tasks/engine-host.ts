import type { Task } from '@trellis/core';
import { ProcessSpawner, settlesWithin } from '@trellis/engine';
import { DagCache } from './dag-cache.js';
import { startAttempt, type RunningAttempt, type TaskContext } from './task-runner.js';

/** A task's context less what the host itself provides. */
export type HostedTaskContext = Omit<TaskContext, 'dags' | 'launcher'>;

/**
 * What running tasks takes: the engine (and through it the DAG parser, yaml and zod), the
 * parsed-DAG cache and the spawner process. The daemon imports this module with its first
 * task, so a worker that has not run anything yet holds none of it.
 */
export class EngineHost {
  private readonly dags = new DagCache();
  private readonly spawner: ProcessSpawner;

  constructor(onCrash: (message: string) => void) {
    this.spawner = new ProcessSpawner({ onCrash });
  }

  start(ctx: HostedTaskContext, task: Task, isStopping: () => boolean): RunningAttempt {
    return startAttempt({ ...ctx, dags: this.dags, launcher: this.spawner.launch }, task, isStopping);
  }

  /** Whether `work` settles within `ms` (the shutdown grace). */
  settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
    return settlesWithin(work, ms);
  }

  close(): Promise<void> {
    return this.spawner.close();
  }
}
