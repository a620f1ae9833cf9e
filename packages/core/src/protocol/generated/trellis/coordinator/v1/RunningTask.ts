// Original file: protos/coordinator/v1/coordinator.proto

import type { TaskRef as _trellis_coordinator_v1_TaskRef, TaskRef__Output as _trellis_coordinator_v1_TaskRef__Output } from '../../../trellis/coordinator/v1/TaskRef.js';

export interface RunningTask {
  'ref'?: (_trellis_coordinator_v1_TaskRef | null);
  'startedAt'?: (string);
  'rootDagRunName'?: (string);
  'rootDagRunId'?: (string);
  'parentDagRunName'?: (string);
  'parentDagRunId'?: (string);
}

export interface RunningTask__Output {
  'ref': (_trellis_coordinator_v1_TaskRef__Output | null);
  'startedAt': (string);
  'rootDagRunName': (string);
  'rootDagRunId': (string);
  'parentDagRunName': (string);
  'parentDagRunId': (string);
}
