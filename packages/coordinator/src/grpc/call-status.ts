import * as grpc from '@grpc/grpc-js';
import { isConnectionError } from '@trellis/store';
import type { Logger } from '../logging/logger.js';
import type { CallContext } from './worker-service.js';

export type Unary = (request: unknown, metadata: grpc.Metadata, call: CallContext) => Promise<unknown>;

/** A handler's refusal with a specific gRPC status (anything else is INTERNAL). */
export class GrpcStatusError extends Error {
  constructor(
    readonly code: grpc.status,
    message: string,
  ) {
    super(message);
    this.name = 'GrpcStatusError';
  }
}

/**
 * A handler's failure as a gRPC status: its own code when it chose one; UNAVAILABLE while the
 * database cannot be reached, so the worker retries (an ack, a report) instead of giving up;
 * INTERNAL (logged) otherwise.
 */
export function failureStatus(error: unknown, method: string, logger: Logger): { code: grpc.status; details: string } {
  const code = error instanceof GrpcStatusError ? error.code : isConnectionError(error) ? grpc.status.UNAVAILABLE : grpc.status.INTERNAL;
  if (code === grpc.status.INTERNAL) logger.error('worker call failed', { method, error });
  return { code, details: error instanceof Error ? error.message : String(error) };
}
