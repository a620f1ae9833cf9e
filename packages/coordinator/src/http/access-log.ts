import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../logging/logger.js';
import { requestIdOf } from './request-id.js';

/** Paths no route matched are logged this far: scanners send long ones. */
const MAX_UNMATCHED_PATH = 200;

/** The route a request matched, as the OpenAPI document names it (set by mountRoutes). */
export function setMatchedRoute(res: Response, route: string): void {
  res.locals.route = route;
}

/**
 * One info line per answered request: method, route, status, duration and request id. The
 * route is the OpenAPI path (`/dags/{fileName}`), never the URL: no query string (tokens may
 * travel there), no header, no body. A request no route matched logs its path without the query.
 */
export function accessLog(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    // 'close' rather than 'finish': a client that hangs up mid-answer (an event stream) is logged too.
    res.once('close', () => {
      const matched: unknown = res.locals.route;
      const route = typeof matched === 'string' ? matched : (req.originalUrl.split('?')[0] ?? '').slice(0, MAX_UNMATCHED_PATH);
      const durationMs = Math.round(Number(process.hrtime.bigint() - started) / 1e5) / 10;
      logger.info('http request', { method: req.method, route, status: res.statusCode, durationMs, requestId: requestIdOf(res) });
    });
    next();
  };
}
