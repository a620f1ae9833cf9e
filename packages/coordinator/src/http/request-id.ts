import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

export const REQUEST_ID_HEADER = 'X-Request-Id';

/** A caller's id is taken as it is only when short and plain: it lands in logs and headers. */
const ACCEPTED = /^[A-Za-z0-9._:-]{1,128}$/;

/** The id this request is known by in logs and error bodies (set by `assignRequestId`). */
export function requestIdOf(res: Response): string | undefined {
  const id: unknown = res.locals.requestId;
  return typeof id === 'string' ? id : undefined;
}

/** Takes the caller's `X-Request-Id` when it is safe, else makes one, and echoes it on the response. */
export function assignRequestId(req: Request, res: Response, next: NextFunction): void {
  const offered = req.get(REQUEST_ID_HEADER);
  const id = offered !== undefined && ACCEPTED.test(offered) ? offered : randomUUID();
  res.locals.requestId = id;
  res.setHeader(REQUEST_ID_HEADER, id);
  next();
}
