import type { NextFunction, Request, Response } from 'express';
import { isConnectionError } from '@trellis/store';
import { ApiError, BadRequestError, InternalError, NotFoundError, ServiceUnavailableError, toErrorBody } from '../errors/api-errors.js';
import { toError } from '../errors/normalize.js';
import type { Logger } from '../logging/logger.js';
import { requestIdOf } from './request-id.js';

interface ExpressError extends Error {
  type?: string;
  status?: number;
  expose?: boolean;
  /** Set by zlib on a decompression failure. */
  errno?: number;
}

/** Errors raised by express before any handler ran: the router's and express.json()'s. */
function fromExpress(error: ExpressError): ApiError | undefined {
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
function fromInflate(error: ExpressError): ApiError | undefined {
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
    let apiError = error instanceof ApiError ? error : fromExpress(error);
    const requestId = requestIdOf(res);
    if (apiError === undefined && isConnectionError(raw)) {
      // Not a fault of this request, nor a bug: the database is down or restarting. Clients may retry.
      logger.warn('database unreachable while serving a request', { method: req.method, path: req.originalUrl.split('?')[0], requestId, error });
      apiError = new ServiceUnavailableError('the database is unreachable; try again shortly');
    }
    if (apiError === undefined) {
      logger.error('unhandled error while serving a request', { method: req.method, path: req.originalUrl.split('?')[0], requestId, error });
      apiError = new InternalError('internal server error');
    }
    const body = toErrorBody(apiError);
    // The id the caller can quote, and find in the logs.
    if (requestId !== undefined) body.details = { ...body.details, requestId };
    res.set(apiError.headers()).status(apiError.status).json(body);
  };
}

export function notFoundHandler(req: Request, _res: Response, next: NextFunction): void {
  next(new NotFoundError(`no such endpoint: ${req.method} ${req.originalUrl.split('?')[0] ?? ''}`));
}
