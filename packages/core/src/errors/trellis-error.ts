/**
 * The contract's error codes (interface.md, "Error body"): what a client reads in `code`.
 */
export type ErrorCode =
  | 'bad_request'
  | 'not_found'
  | 'internal_error'
  | 'unauthorized'
  | 'forbidden'
  | 'already_exists'
  | 'max_run_reached'
  | 'not_running'
  | 'already_running'
  | 'timeout'
  | 'service_unavailable'
  /** Not in the contract's list, which has no status for throttling: failed logins past the limit (429). */
  | 'too_many_requests';

/**
 * What a transport maps to its status. The same as the code except `singleton_running`: the
 * contract answers `already_running` with 400 on a retry but 409 on a singleton start, so the
 * two need distinct rows in the status table while clients see one code.
 */
export type ErrorKind = ErrorCode | 'singleton_running';

/**
 * The base of every domain error: it says what went wrong in the contract's vocabulary and
 * nothing about transports; the coordinator's status table turns the kind into an HTTP or gRPC
 * status, and its HTTP error handler is the only place that builds a `{code, message, details}` body.
 */
export abstract class TrellisError extends Error {
  abstract readonly kind: ErrorKind;
  readonly details: Record<string, unknown> | undefined;

  constructor(message: string, details?: Record<string, unknown>, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.details = details;
  }

  get code(): ErrorCode {
    return this.kind === 'singleton_running' ? 'already_running' : this.kind;
  }

  /** Top-level body fields beside code, message and details (start-sync's `dagRunId`). */
  bodyExtras(): Record<string, unknown> {
    return {};
  }
}
