// Original file: protos/coordinator/v1/coordinator.proto

import type { TaskRef as _trellis_coordinator_v1_TaskRef, TaskRef__Output as _trellis_coordinator_v1_TaskRef__Output } from '../../../trellis/coordinator/v1/TaskRef.js';

export interface AckTaskRequest {
  'workerId'?: (string);
  'ref'?: (_trellis_coordinator_v1_TaskRef | null);
}

export interface AckTaskRequest__Output {
  'workerId': (string);
  'ref': (_trellis_coordinator_v1_TaskRef__Output | null);
}
