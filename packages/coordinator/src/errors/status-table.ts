import { status as GrpcStatus } from '@grpc/grpc-js';
import type { ErrorKind } from '@trellis/core';

export interface TransportStatus {
  http: number;
  grpc: GrpcStatus;
}

/**
 * The one mapping from a domain error's kind to what each transport answers: the HTTP statuses
 * are the contract's (interface.md), the gRPC ones their nearest gRPC meaning. Only
 * `internal_error` is a fault of ours, logged as one; every other kind is the caller's answer.
 */
export const STATUS_TABLE: Readonly<Record<ErrorKind, TransportStatus>> = {
  bad_request: { http: 400, grpc: GrpcStatus.INVALID_ARGUMENT },
  not_found: { http: 404, grpc: GrpcStatus.NOT_FOUND },
  unauthorized: { http: 401, grpc: GrpcStatus.UNAUTHENTICATED },
  forbidden: { http: 403, grpc: GrpcStatus.PERMISSION_DENIED },
  already_exists: { http: 409, grpc: GrpcStatus.ALREADY_EXISTS },
  max_run_reached: { http: 409, grpc: GrpcStatus.RESOURCE_EXHAUSTED },
  // Stopping a run that is not running: 400 by the contract; the run is not in the state the call needs.
  not_running: { http: 400, grpc: GrpcStatus.FAILED_PRECONDITION },
  // Retrying a run that still runs: 400 by the contract.
  already_running: { http: 400, grpc: GrpcStatus.FAILED_PRECONDITION },
  // A singleton start refused while the DAG runs: the same code, but 409 by the contract.
  singleton_running: { http: 409, grpc: GrpcStatus.ALREADY_EXISTS },
  timeout: { http: 408, grpc: GrpcStatus.DEADLINE_EXCEEDED },
  service_unavailable: { http: 503, grpc: GrpcStatus.UNAVAILABLE },
  too_many_requests: { http: 429, grpc: GrpcStatus.RESOURCE_EXHAUSTED },
  internal_error: { http: 500, grpc: GrpcStatus.INTERNAL },
};
