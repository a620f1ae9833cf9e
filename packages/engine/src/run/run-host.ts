import type { RunOptions, SubRunHandle } from '../types.js';
import type { StopRequest } from '../executors/types.js';
import type { RunEnvironment } from './run-environment.js';
import type { RunResources } from './run-resources.js';

/** What step execution and sub-DAG steps see of the run they belong to (the runner holds it). */
export interface RunHost {
  readonly options: RunOptions;
  readonly env: RunEnvironment;
  /** Aborted when the run is asked to stop or times out. */
  readonly stopSignal: AbortSignal;
  /** One controller per executing step: stopping the run aborts them all. */
  readonly stepControllers: Set<AbortController>;
  /** Sub-DAG runs in flight: stopping the run stops them. */
  readonly children: Set<SubRunHandle>;
  /** What the run's steps share (a DAG-level container); released when the run ends. */
  readonly resources: RunResources;
  /** Why the run is stopping, once it is. */
  stopReason(): StopRequest['kind'] | undefined;
  /** After the steps, handlers run to completion even though the run was stopped. */
  inHandlerPhase(): boolean;
  log(message: string): void;
  /** Reports the run's snapshot. */
  emit(): void;
}
