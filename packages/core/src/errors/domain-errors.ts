import { TrellisError } from './trellis-error.js';

/** The request is malformed or asks for something its inputs do not allow. */
export class BadRequestError extends TrellisError {
  readonly kind = 'bad_request';
}

export class NotFoundError extends TrellisError {
  readonly kind = 'not_found';
}

export class UnauthorizedError extends TrellisError {
  readonly kind = 'unauthorized';
}

export class ForbiddenError extends TrellisError {
  readonly kind = 'forbidden';
}

/** A resource such as a run id or a DAG name exists already. */
export class AlreadyExistsError extends TrellisError {
  readonly kind = 'already_exists';
}

/** A concurrency, singleton or queue limit refused the run. */
export class MaxRunReachedError extends TrellisError {
  readonly kind = 'max_run_reached';
}

/** Stopping (or steering) a run that is not running. */
export class NotRunningError extends TrellisError {
  readonly kind = 'not_running';
}

/** Retrying a run that is still running or queued. */
export class AlreadyRunningError extends TrellisError {
  readonly kind = 'already_running';
}

/** A singleton start refused because the DAG is running: `already_running`, but a conflict. */
export class AlreadyRunningConflictError extends TrellisError {
  readonly kind = 'singleton_running';
}

/** A wait for a run ended before the run did; the run continues. */
export class TimeoutError extends TrellisError {
  readonly kind = 'timeout';

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

/** Where a repository sync item's remote version changed since it was last synced: what changed it, for the 409 body. */
export interface SyncConflict {
  itemId: string;
  remoteCommit: string;
  remoteAuthor: string;
  remoteMessage: string;
}

/** A sync publish or move refused because someone else changed the item in the repository (409, `already_exists`: the contract has no conflict code). */
export class SyncConflictError extends TrellisError {
  readonly kind = 'already_exists';

  constructor(
    message: string,
    readonly conflict: SyncConflict,
  ) {
    super(message);
  }

  override bodyExtras(): Record<string, unknown> {
    return { ...this.conflict };
  }
}

/** A dependency (the database, the worker fleet) cannot serve now; the caller may retry. */
export class ServiceUnavailableError extends TrellisError {
  readonly kind = 'service_unavailable';
}

/** Too many failed logins for an account or from an address; `retryAfterSec` says when to try again. */
export class TooManyRequestsError extends TrellisError {
  readonly kind = 'too_many_requests';

  constructor(
    message: string,
    readonly retryAfterSec: number,
  ) {
    super(message, { retryAfterSec });
  }
}

/** A fault of ours, not of the request. */
export class InternalError extends TrellisError {
  readonly kind = 'internal_error';
}
