import type { NextFunction, Request, Response } from 'express';
import { BadRequestError, InternalError, NotFoundError, ServiceUnavailableError, TooManyRequestsError, TrellisError, toError, type ErrorCode } from '@trellis/core';
import { failureKind } from '../errors/failure-kind.js';
import { STATUS_TABLE } from '../errors/status-table.js';
import type { Logger } from '../logging/logger.js';
import { sendJson } from './json-answer.js';
import { requestIdOf } from './request-id.js';

interface ExpressError extends Error {
  type?: string;
  status?: number;
  expose?: boolean;
  /** Set by zlib on a decompression failure. */
  errno?: number;
}

/** The contract's error body (interface.md, "Error body"). */
interface ErrorBody {
  code: ErrorCode;
  message: string;
  details?: Record<string, unknown>;
  [extra: string]: unknown;
}

function toErrorBody(error: TrellisError): ErrorBody {
  const body: ErrorBody = { code: error.code, message: error.message, ...error.bodyExtras() };
  if (error.details !== undefined) body.details = error.details;
  return body;
}

/** Errors raised by express before any handler ran: the router's and express.json()'s. */
function fromExpress(error: ExpressError): TrellisError | undefined {
  // The router decodes path parameters: a malformed `%` escape (`/dags/%zz`) is the client's.
  if (error instanceof URIError) return new BadRequestError(`malformed percent-encoding in the request path: ${error.message}`);
  switch (error.type) {
    case 'entity.parse.failed':
      return new BadRequestError(`malformed JSON body: ${error.message}`);
    case 'entity.too.large':
      return new BadRequestError('request body too large');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new BadRequestError(error.message);
    default:
      return fromInflate(error);
  }
}

/**
 * A body that is not what its `Content-Encoding` (gzip, deflate, br) says fails in zlib; the
 * body parser passes that zlib error on with status 400 but without a `type`.
 */
function fromInflate(error: ExpressError): TrellisError | undefined {
  const zlibFailure = error.status === 400 && typeof error.errno === 'number';
  return zlibFailure ? new BadRequestError(`request body does not match its Content-Encoding: ${error.message}`) : undefined;
}

/** The only place that turns errors into `{code, message, details}` bodies. */
export function errorHandler(logger: Logger) {
  return (raw: unknown, req: Request, res: Response, next: NextFunction): void => {
    if (res.headersSent) {
      next(raw);
      return;
    }
    const error = toError(raw);
    let known = error instanceof TrellisError ? error : fromExpress(error);
    const requestId = requestIdOf(res);
    if (known === undefined && failureKind(raw) === 'service_unavailable') {
      // Not a fault of this request, nor a bug: the database is down or restarting. Clients may retry.
      logger.warn('database unreachable while serving a request', { method: req.method, path: req.originalUrl.split('?')[0], requestId, error });
      known = new ServiceUnavailableError('the database is unreachable; try again shortly');
    }
    // An internal error's message is for our logs (it may name paths), not for the client.
    if (known === undefined || known.kind === 'internal_error') {
      logger.error('unhandled error while serving a request', { method: req.method, path: req.originalUrl.split('?')[0], requestId, error });
      known = new InternalError('internal server error');
    }
    const body = toErrorBody(known);
    // The id the caller can quote, and find in the logs.
    if (requestId !== undefined) body.details = { ...body.details, requestId };
    // The throttle's answer says when to come back (RFC 9110 Retry-After).
    if (known instanceof TooManyRequestsError) res.set('Retry-After', String(known.retryAfterSec));
    sendJson(res, STATUS_TABLE[known.kind].http, JSON.stringify(body));
  };
}

export function notFoundHandler(req: Request, _res: Response, next: NextFunction): void {
  next(new NotFoundError(`no such endpoint: ${req.method} ${req.originalUrl.split('?')[0] ?? ''}`));
}
