// Original file: protos/coordinator/v1/coordinator.proto

import type { Long } from '@grpc/proto-loader';

export interface ReportResponse {
  /**
   * Highest sequence number the coordinator has applied; the worker drops what it holds up to it.
   */
  'appliedSeq'?: (number | string | Long);
  /**
   * The attempt is no longer current: the worker must stop it and drop its reports.
   */
  'stale'?: (boolean);
}

export interface ReportResponse__Output {
  /**
   * Highest sequence number the coordinator has applied; the worker drops what it holds up to it.
   */
  'appliedSeq': (number);
  /**
   * The attempt is no longer current: the worker must stop it and drop its reports.
   */
  'stale': (boolean);
}
