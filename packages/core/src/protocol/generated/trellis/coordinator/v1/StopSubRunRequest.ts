// Original file: protos/coordinator/v1/coordinator.proto

import type { TaskRef as _trellis_coordinator_v1_TaskRef, TaskRef__Output as _trellis_coordinator_v1_TaskRef__Output } from '../../../trellis/coordinator/v1/TaskRef.js';

export interface StopSubRunRequest {
  'workerId'?: (string);
  'parent'?: (_trellis_coordinator_v1_TaskRef | null);
  'dagName'?: (string);
  'dagRunId'?: (string);
}

export interface StopSubRunRequest__Output {
  'workerId': (string);
  'parent': (_trellis_coordinator_v1_TaskRef__Output | null);
  'dagName': (string);
  'dagRunId': (string);
}
