// Original file: protos/coordinator/v1/coordinator.proto

import type { TaskRef as _trellis_coordinator_v1_TaskRef, TaskRef__Output as _trellis_coordinator_v1_TaskRef__Output } from '../../../trellis/coordinator/v1/TaskRef.js';

export interface RegisterResponse {
  'heartbeatIntervalMs'?: (number);
  /**
   * Attempts the coordinator has recorded as running on this worker, after reconciliation.
   */
  'assigned'?: (_trellis_coordinator_v1_TaskRef)[];
}

export interface RegisterResponse__Output {
  'heartbeatIntervalMs': (number);
  /**
   * Attempts the coordinator has recorded as running on this worker, after reconciliation.
   */
  'assigned': (_trellis_coordinator_v1_TaskRef__Output)[];
}
