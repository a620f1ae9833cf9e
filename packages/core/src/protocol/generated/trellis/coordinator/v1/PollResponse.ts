// Original file: protos/coordinator/v1/coordinator.proto

import type { Task as _trellis_coordinator_v1_Task, Task__Output as _trellis_coordinator_v1_Task__Output } from '../../../trellis/coordinator/v1/Task.js';

export interface PollResponse {
  /**
   * Absent when the wait ended without work.
   */
  'task'?: (_trellis_coordinator_v1_Task | null);
}

export interface PollResponse__Output {
  /**
   * Absent when the wait ended without work.
   */
  'task': (_trellis_coordinator_v1_Task__Output | null);
}
