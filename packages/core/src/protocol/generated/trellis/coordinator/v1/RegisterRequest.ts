// Original file: protos/coordinator/v1/coordinator.proto

import type { TaskRef as _trellis_coordinator_v1_TaskRef, TaskRef__Output as _trellis_coordinator_v1_TaskRef__Output } from '../../../trellis/coordinator/v1/TaskRef.js';

export interface RegisterRequest {
  'workerId'?: (string);
  'labels'?: ({[key: string]: string});
  'pollers'?: (number);
  'hostname'?: (string);
  'version'?: (string);
  /**
   * Attempts this process holds: running, or being acknowledged. Of the attempts the
   * coordinator recorded on this worker id, a started one missing here fails (its process
   * is gone) and one never acknowledged goes back to the queue.
   */
  'held'?: (_trellis_coordinator_v1_TaskRef)[];
  /**
   * True when `held` is filled in: a worker that predates it must not lose its runs.
   */
  'listsHeld'?: (boolean);
}

export interface RegisterRequest__Output {
  'workerId': (string);
  'labels': ({[key: string]: string});
  'pollers': (number);
  'hostname': (string);
  'version': (string);
  /**
   * Attempts this process holds: running, or being acknowledged. Of the attempts the
   * coordinator recorded on this worker id, a started one missing here fails (its process
   * is gone) and one never acknowledged goes back to the queue.
   */
  'held': (_trellis_coordinator_v1_TaskRef__Output)[];
  /**
   * True when `held` is filled in: a worker that predates it must not lose its runs.
   */
  'listsHeld': (boolean);
}
