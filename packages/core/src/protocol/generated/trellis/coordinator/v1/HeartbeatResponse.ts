// Original file: protos/coordinator/v1/coordinator.proto

import type { TaskRef as _trellis_coordinator_v1_TaskRef, TaskRef__Output as _trellis_coordinator_v1_TaskRef__Output } from '../../../trellis/coordinator/v1/TaskRef.js';
import type { RunCommand as _trellis_coordinator_v1_RunCommand, RunCommand__Output as _trellis_coordinator_v1_RunCommand__Output } from '../../../trellis/coordinator/v1/RunCommand.js';

export interface HeartbeatResponse {
  /**
   * Stop these attempts (the run was stopped, failed over, or superseded).
   */
  'cancel'?: (_trellis_coordinator_v1_TaskRef)[];
  /**
   * The coordinator does not know this worker (it restarted): register again.
   */
  'reregister'?: (boolean);
  /**
   * Decisions for steps waiting for approval in runs on this worker, each sent once.
   */
  'commands'?: (_trellis_coordinator_v1_RunCommand)[];
}

export interface HeartbeatResponse__Output {
  /**
   * Stop these attempts (the run was stopped, failed over, or superseded).
   */
  'cancel': (_trellis_coordinator_v1_TaskRef__Output)[];
  /**
   * The coordinator does not know this worker (it restarted): register again.
   */
  'reregister': (boolean);
  /**
   * Decisions for steps waiting for approval in runs on this worker, each sent once.
   */
  'commands': (_trellis_coordinator_v1_RunCommand__Output)[];
}
