import type { NextFunction, Request, Response } from 'express';
import { ApiError, BadRequestError, InternalError, NotFoundError, toErrorBody } from '../errors/api-errors.js';
import { toError } from '../errors/normalize.js';
import type { Logger } from '../logging/logger.js';
import { requestIdOf } from './request-id.js';

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
    const requestId = requestIdOf(res);
    if (apiError === undefined) {
      logger.error('unhandled error while serving a request', { method: req.method, path: req.originalUrl.split('?')[0], requestId, error });
      apiError = new InternalError('internal server error');
    }
    const body = toErrorBody(apiError);
    // The id the caller can quote, and find in the logs.
    if (requestId !== undefined) body.details = { ...body.details, requestId };
    res.status(apiError.status).json(body);
  };
}

export function notFoundHandler(req: Request, _res: Response, next: NextFunction): void {
  next(new NotFoundError(`no such endpoint: ${req.method} ${req.originalUrl.split('?')[0] ?? ''}`));
}
