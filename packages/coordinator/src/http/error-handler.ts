import type { NextFunction, Request, Response } from 'express';
import { isConnectionError } from '@trellis/store';
import { ApiError, BadRequestError, InternalError, NotFoundError, ServiceUnavailableError, toErrorBody } from '../errors/api-errors.js';
import { toError } from '../errors/normalize.js';
import type { Logger } from '../logging/logger.js';

interface BodyParserError extends Error {
  type?: string;
  status?: number;
}

/** Errors raised by express.json() before any handler ran. */
function fromBodyParser(error: BodyParserError): ApiError | undefined {
  switch (error.type) {
    case 'entity.parse.failed':
      return new BadRequestError(`malformed JSON body: ${error.message}`);
    case 'entity.too.large':
      return new BadRequestError('request body too large');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new BadRequestError(error.message);
    default:
      return undefined;
  }
}

/** The only place that turns errors into `{code, message, details}` bodies. */
export function errorHandler(logger: Logger) {
  return (raw: unknown, req: Request, res: Response, next: NextFunction): void => {
    if (res.headersSent) {
      next(raw);
      return;
    }
    const error = toError(raw);
    let apiError = error instanceof ApiError ? error : fromBodyParser(error);
    if (apiError === undefined && isConnectionError(raw)) {
      // Not a fault of this request, nor a bug: the database is down or restarting. Clients may retry.
      logger.warn('database unreachable while serving a request', { method: req.method, path: req.originalUrl, error });
      apiError = new ServiceUnavailableError('the database is unreachable; try again shortly');
    }
    if (apiError === undefined) {
      logger.error('unhandled error while serving a request', { method: req.method, path: req.originalUrl, error });
      apiError = new InternalError('internal server error');
    }
    res.status(apiError.status).json(toErrorBody(apiError));
  };
}

export function notFoundHandler(req: Request, _res: Response, next: NextFunction): void {
  next(new NotFoundError(`no such endpoint: ${req.method} ${req.originalUrl.split('?')[0] ?? ''}`));
}
