import type { Request, Response, Router } from 'express';
import type { z } from 'zod';
import { BadRequestError } from '../errors/api-errors.js';
import { setMatchedRoute } from './access-log.js';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** What a handler sees: validated path params, query and body, plus the raw request/response. */
export interface RouteContext<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  req: Request;
  res: Response;
}

/** A handler's answer with an explicit status; a plain value means `successStatus` (default 200). */
export class Reply {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {}
}

export const reply = (status: number, body?: unknown): Reply => new Reply(status, body);

/** Returned by handlers that wrote the response themselves (text, streams). */
export const HANDLED: unique symbol = Symbol('handled');

type Schema = z.ZodType;
type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

export interface RouteDef<P extends Schema | undefined, Q extends Schema | undefined, B extends Schema | undefined> {
  method: HttpMethod;
  /** OpenAPI-style path relative to the API base path, e.g. `/dags/{fileName}`. */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  params?: P;
  query?: Q;
  body?: B;
  /** Documents the success body; not enforced at run time. */
  response?: Schema;
  successStatus?: number;
  /** Error statuses the route can answer, for the OpenAPI document. */
  errors?: number[];
  /** Content type of a non-JSON success body (for example the metrics text). */
  produces?: string;
  handler(ctx: RouteContext<Out<P>, Out<Q>, Out<B>>): Promise<unknown>;
}

/** The registry stores heterogeneous routes; their schema types are erased here. */
export type AnyRoute = RouteDef<Schema | undefined, Schema | undefined, Schema | undefined>;

/** Identity helper that keeps each route's schema types flowing into its handler. */
export function defineRoute<P extends Schema | undefined = undefined, Q extends Schema | undefined = undefined, B extends Schema | undefined = undefined>(
  route: RouteDef<P, Q, B>,
): AnyRoute {
  return route;
}

/** Express path syntax from the OpenAPI one: `{name}` becomes `:name`. */
export function toExpressPath(path: string): string {
  return path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
}

/**
 * Static segments must win over parameters at the same position (`/dags/search` before
 * `/dags/{fileName}`), whatever order the route modules were written in.
 */
export function sortBySpecificity(routes: AnyRoute[]): AnyRoute[] {
  const weight = (path: string): string =>
    path
      .split('/')
      .map((segment) => (segment.startsWith('{') ? '1' : '0'))
      .join('');
  return [...routes].sort((a, b) => weight(a.path).localeCompare(weight(b.path)));
}

export function formatIssues(where: string, issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((issue) => {
      const path = [where, ...issue.path.map(String)].join('.');
      return `${path}: ${issue.message}`;
    })
    .join('; ');
}

function parsePart<S extends Schema | undefined>(schema: S, value: unknown, where: string): Out<S> {
  if (schema === undefined) return undefined as Out<S>;
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new BadRequestError(formatIssues(where, result.error.issues), { issues: result.error.issues.map((i) => ({ path: [where, ...i.path.map(String)].join('.'), message: i.message })) });
  }
  return result.data as Out<S>;
}

async function runRoute(route: AnyRoute, req: Request, res: Response): Promise<void> {
  const params: unknown = parsePart(route.params, req.params, 'path');
  const query: unknown = parsePart(route.query, req.query, 'query');
  const body: unknown = parsePart(route.body, req.body ?? {}, 'body');
  const result = await route.handler({ params, query, body, req, res });
  if (result === HANDLED) return;
  if (result instanceof Reply) {
    if (result.body === undefined) res.status(result.status).end();
    else res.status(result.status).json(result.body);
    return;
  }
  const status = route.successStatus ?? 200;
  if (status === 204 || result === undefined) res.status(status).end();
  else res.status(status).json(result);
}

/** Binds every route to an express router; rejections reach the error middleware (express 5). */
/** Told of every answered request, by the route's OpenAPI path (metrics). */
export type RequestObserver = (method: string, route: string, status: number, seconds: number) => void;

export function mountRoutes(router: Router, routes: AnyRoute[], observe?: RequestObserver): void {
  for (const route of sortBySpecificity(routes)) {
    router[route.method](toExpressPath(route.path), (req: Request, res: Response) => {
      setMatchedRoute(res, route.path);
      if (observe !== undefined) {
        const started = process.hrtime.bigint();
        res.once('finish', () => observe(route.method.toUpperCase(), route.path, res.statusCode, Number(process.hrtime.bigint() - started) / 1e9));
      }
      return runRoute(route, req, res);
    });
  }
}
