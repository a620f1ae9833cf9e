// Original file: protos/coordinator/v1/coordinator.proto

import type { RunningTask as _trellis_coordinator_v1_RunningTask, RunningTask__Output as _trellis_coordinator_v1_RunningTask__Output } from '../../../trellis/coordinator/v1/RunningTask.js';
import type { TaskRef as _trellis_coordinator_v1_TaskRef, TaskRef__Output as _trellis_coordinator_v1_TaskRef__Output } from '../../../trellis/coordinator/v1/TaskRef.js';

export interface HeartbeatRequest {
  'workerId'?: (string);
  'running'?: (_trellis_coordinator_v1_RunningTask)[];
  'pollersTotal'?: (number);
  'pollersBusy'?: (number);
  /**
   * Attempts being acknowledged: not running yet, but held. A started attempt the coordinator
   * records on this worker that is in neither list (for a few seconds) fails as lost.
   */
  'claiming'?: (_trellis_coordinator_v1_TaskRef)[];
}

export interface HeartbeatRequest__Output {
  'workerId': (string);
  'running': (_trellis_coordinator_v1_RunningTask__Output)[];
  'pollersTotal': (number);
  'pollersBusy': (number);
  /**
   * Attempts being acknowledged: not running yet, but held. A started attempt the coordinator
   * records on this worker that is in neither list (for a few seconds) fails as lost.
   */
  'claiming': (_trellis_coordinator_v1_TaskRef__Output)[];
}
