// Original file: protos/coordinator/v1/coordinator.proto

import type { LogChunk as _trellis_coordinator_v1_LogChunk, LogChunk__Output as _trellis_coordinator_v1_LogChunk__Output } from '../../../trellis/coordinator/v1/LogChunk.js';
import type { Long } from '@grpc/proto-loader';

export interface ReportEvent {
  /**
   * Per-attempt sequence number, starting at 1, with no gaps.
   */
  'seq'?: (number | string | Long);
  /**
   * JSON of the engine's run status snapshot (run status, nodes, error), with log paths
   * relative to the attempt's log directory.
   */
  'statusJson'?: (string);
  'log'?: (_trellis_coordinator_v1_LogChunk | null);
  /**
   * JSON of the run's outputs and their metadata.
   */
  'outputsJson'?: (string);
  'body'?: "statusJson"|"log"|"outputsJson";
}

export interface ReportEvent__Output {
  /**
   * Per-attempt sequence number, starting at 1, with no gaps.
   */
  'seq': (number);
  /**
   * JSON of the engine's run status snapshot (run status, nodes, error), with log paths
   * relative to the attempt's log directory.
   */
  'statusJson'?: (string);
  'log'?: (_trellis_coordinator_v1_LogChunk__Output | null);
  /**
   * JSON of the run's outputs and their metadata.
   */
  'outputsJson'?: (string);
  'body'?: "statusJson"|"log"|"outputsJson";
}
