// Original file: protos/coordinator/v1/coordinator.proto

import type { TaskRef as _trellis_coordinator_v1_TaskRef, TaskRef__Output as _trellis_coordinator_v1_TaskRef__Output } from '../../../trellis/coordinator/v1/TaskRef.js';

export interface RunCommand {
  'ref'?: (_trellis_coordinator_v1_TaskRef | null);
  /**
   * "approve" or "reject".
   */
  'kind'?: (string);
  'stepName'?: (string);
  'inputs'?: ({[key: string]: string});
  'reason'?: (string);
}

export interface RunCommand__Output {
  'ref': (_trellis_coordinator_v1_TaskRef__Output | null);
  /**
   * "approve" or "reject".
   */
  'kind': (string);
  'stepName': (string);
  'inputs': ({[key: string]: string});
  'reason': (string);
}
