// Original file: protos/coordinator/v1/coordinator.proto

import type { TaskRef as _trellis_coordinator_v1_TaskRef, TaskRef__Output as _trellis_coordinator_v1_TaskRef__Output } from '../../../trellis/coordinator/v1/TaskRef.js';
import type { ReportEvent as _trellis_coordinator_v1_ReportEvent, ReportEvent__Output as _trellis_coordinator_v1_ReportEvent__Output } from '../../../trellis/coordinator/v1/ReportEvent.js';

export interface ReportRequest {
  'workerId'?: (string);
  'ref'?: (_trellis_coordinator_v1_TaskRef | null);
  'events'?: (_trellis_coordinator_v1_ReportEvent)[];
}

export interface ReportRequest__Output {
  'workerId': (string);
  'ref': (_trellis_coordinator_v1_TaskRef__Output | null);
  'events': (_trellis_coordinator_v1_ReportEvent__Output)[];
}
