/**
 * The one typed error hierarchy of the API. Handlers throw these; `http/error-handler.ts`
 * is the only place that turns them into the contract's `{code, message, details}` bodies.
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
  | 'too_many_requests';

export abstract class ApiError extends Error {
  abstract readonly code: ErrorCode;
  abstract readonly status: number;
  readonly details: Record<string, unknown> | undefined;

  constructor(message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = new.target.name;
    this.details = details;
  }

  /** Extra top-level body fields some errors carry (start-sync's `dagRunId`). */
  bodyExtras(): Record<string, unknown> {
    return {};
  }

  /** Response headers the error carries (`Retry-After`). */
  headers(): Record<string, string> {
    return {};
  }
}

export class BadRequestError extends ApiError {
  readonly code = 'bad_request';
  readonly status = 400;
}

export class NotFoundError extends ApiError {
  readonly code = 'not_found';
  readonly status = 404;
}

export class UnauthorizedError extends ApiError {
  readonly code = 'unauthorized';
  readonly status = 401;
}

export class ForbiddenError extends ApiError {
  readonly code = 'forbidden';
  readonly status = 403;
}

export class AlreadyExistsError extends ApiError {
  readonly code = 'already_exists';
  readonly status = 409;
}

export class MaxRunReachedError extends ApiError {
  readonly code = 'max_run_reached';
  readonly status = 409;
}

/** 400 by the contract: stopping a run that is not running is a bad request, not a conflict. */
export class NotRunningError extends ApiError {
  readonly code = 'not_running';
  readonly status = 400;
}

/** Retry of a run that is still running: 400 by the contract. */
export class AlreadyRunningError extends ApiError {
  readonly code = 'already_running';
  readonly status = 400;
}

/** A singleton start refused because the DAG is running: 409 by the contract. */
export class AlreadyRunningConflictError extends ApiError {
  readonly code = 'already_running';
  readonly status = 409;
}

export class TimeoutError extends ApiError {
  readonly code = 'timeout';
  readonly status = 408;

  constructor(
    message: string,
    readonly dagRunId: string,
  ) {
    super(message);
  }

  override bodyExtras(): Record<string, unknown> {
    return { dagRunId: this.dagRunId };
  }
}

export class ServiceUnavailableError extends ApiError {
  readonly code = 'service_unavailable';
  readonly status = 503;
}

/** Too many failed logins for an account or from an address; `Retry-After` says when to try again. */
export class TooManyRequestsError extends ApiError {
  readonly code = 'too_many_requests';
  readonly status = 429;

  constructor(
    message: string,
    readonly retryAfterSec: number,
  ) {
    super(message, { retryAfterSec });
  }

  override headers(): Record<string, string> {
    return { 'Retry-After': String(this.retryAfterSec) };
  }
}

export class InternalError extends ApiError {
  readonly code = 'internal_error';
  readonly status = 500;
}

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  details?: Record<string, unknown>;
  [extra: string]: unknown;
}

export function toErrorBody(error: ApiError): ErrorBody {
  const body: ErrorBody = { code: error.code, message: error.message, ...error.bodyExtras() };
  if (error.details !== undefined) body.details = error.details;
  return body;
}
