import { TrellisError, type ErrorKind } from '@trellis/core';
import { isConnectionError } from '@trellis/store';

/**
 * What a failure means to a caller, in the status table's terms: a domain error's own kind;
 * `service_unavailable` while the database cannot be reached (the caller retries, it is not our
 * bug); `internal_error` for anything else.
 */
export function failureKind(error: unknown): ErrorKind {
  if (error instanceof TrellisError) return error.kind;
  return isConnectionError(error) ? 'service_unavailable' : 'internal_error';
}
