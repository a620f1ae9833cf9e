import * as grpc from '@grpc/grpc-js';
import { failureKind } from '../errors/failure-kind.js';
import { STATUS_TABLE } from '../errors/status-table.js';
import type { Logger } from '../logging/logger.js';

/**
 * A handler's failure as a gRPC status: a domain error's from the status table (a worker's bad
 * request or a missing run is its answer, not our fault); UNAVAILABLE while the database cannot be
 * reached, so the worker retries (an ack, a report) instead of giving up; INTERNAL (logged) otherwise.
 */
export function failureStatus(error: unknown, method: string, logger: Logger): { code: grpc.status; details: string } {
  const code = STATUS_TABLE[failureKind(error)].grpc;
  if (code === grpc.status.INTERNAL) logger.error('worker call failed', { method, error });
  return { code, details: error instanceof Error ? error.message : String(error) };
}
