import type { Request, Response, Router } from 'express';
import { z } from 'zod';
import { BadRequestError, UnauthorizedError } from '@trellis/core';
import { setMatchedRoute } from './access-log.js';
import type { Permission } from '../auth/permissions.js';
import type { Principal } from '../auth/principal.js';
import { admit, NO_CREDENTIALS, type Authenticate } from './access-control.js';
import { sendJson } from './json-answer.js';
import { ReadCoalescer } from './read-coalescing.js';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** What a handler sees: validated path params, query, body and headers, plus the raw request/response. */
export interface RouteContext<P, Q, B, H = undefined> {
  params: P;
  query: Q;
  body: B;
  /** The headers the route declares, by their declared names. */
  headers: H;
  /** Who is calling; undefined only on public routes. */
  principal: Principal | undefined;
  /**
   * Whether the caller's credentials would still be let in now: a long-lived answer (an event
   * stream) asks again now and then, so a disabled user or a deleted key stops receiving.
   */
  stillAdmitted(): Promise<boolean>;
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

/**
 * A JSON success body the handler serialized itself (from parts cached between requests), as
 * text or as its UTF-8 bytes; sent as it is, and checked like any other body where responses
 * are checked.
 */
export class JsonText {
  constructor(readonly body: string | Buffer) {}
}

/** Returned by handlers that wrote the response themselves (text, streams). */
export const HANDLED: unique symbol = Symbol('handled');

type Schema = z.ZodType;
/** Request headers a route reads: an object schema keyed by header name (matched case-insensitively). */
type HeaderSchema = z.ZodObject;
type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

export interface RouteDef<P extends Schema | undefined, Q extends Schema | undefined, B extends Schema | undefined, H extends HeaderSchema | undefined = undefined> {
  method: HttpMethod;
  /** OpenAPI-style path relative to the API base path, e.g. `/dags/{fileName}`. */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  /**
   * What the caller needs (see `auth/permissions.ts`); the access-control middleware and the
   * OpenAPI document's security requirements both read it.
   */
  permission: Permission;
  params?: P;
  query?: Q;
  body?: B;
  /** Headers the route reads, validated like the rest and declared in the OpenAPI document. */
  headers?: H;
  /**
   * The success body, and the OpenAPI document's only source for it: generated clients are typed
   * from it. `NO_CONTENT` for 204 routes, `z.string()` for the non-JSON bodies named by `produces`.
   * Checked against every answer when the app is created with `checkResponses` (tests).
   */
  response: Schema;
  successStatus?: number;
  /** Error statuses the route can answer, for the OpenAPI document. */
  errors?: number[];
  /** Bodies of statuses that differ from the contract's error body (start-sync's 408, /health's 503). */
  errorBodies?: Partial<Record<number, Schema>>;
  /** Marked deprecated in the OpenAPI document. */
  deprecated?: boolean;
  /** Content type of a non-JSON success body (for example the metrics text). */
  produces?: string;
  /**
   * Identical requests in flight share one answer (see read-coalescing.ts): only for reads whose
   * answer is a `JsonText` that depends on nothing but the path and query string, never on who
   * asks (each caller is still admitted on its own) nor on the request's headers.
   */
  shareAnswers?: boolean;
  handler(ctx: RouteContext<Out<P>, Out<Q>, Out<B>, Out<H>>): Promise<unknown>;
}

/** The caller of a route that needs credentials (always set there: `admit` refused the request otherwise). */
export function actorOf(ctx: { principal: Principal | undefined }): Principal {
  if (ctx.principal === undefined) throw new UnauthorizedError('authentication required');
  return ctx.principal;
}

/** The registry stores heterogeneous routes; their schema types are erased here. */
export type AnyRoute = RouteDef<Schema | undefined, Schema | undefined, Schema | undefined, HeaderSchema | undefined>;

/** Identity helper that keeps each route's schema types flowing into its handler. */
export function defineRoute<P extends Schema | undefined = undefined, Q extends Schema | undefined = undefined, B extends Schema | undefined = undefined, H extends HeaderSchema | undefined = undefined>(
  route: RouteDef<P, Q, B, H>,
): AnyRoute {
  return route;
}

/** The response of a 204 route: no body. */
export const NO_CONTENT = z.undefined();

/**
 * The contract's `remoteNode` query, which every operation takes. No remote nodes exist, so
 * anything but `local` is refused rather than answered with this node's data.
 */
export const remoteNodeQuery = z.object({
  remoteNode: z
    .literal('local', { error: 'only "local" is supported: no remote nodes are configured' })
    .default('local')
    .describe('The node to act on. Only `local` (this service) exists; any other value is refused with 400 bad_request.'),
});

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
  // Strings of 0 and 1 compare the same by code unit as by locale, without loading collation data.
  return [...routes].sort((a, b) => {
    const [x, y] = [weight(a.path), weight(b.path)];
    return x < y ? -1 : x > y ? 1 : 0;
  });
}

export function formatIssues(where: string, issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((issue) => {
      const path = [where, ...issue.path.map(String)].join('.');
      return `${path}: ${issue.message}`;
    })
    .join('; ');
}

/**
 * The field path of the first string (value or key) holding a NUL character, which no store
 * accepts (PostgreSQL text and jsonb refuse it) and no name or spec legitimately contains.
 * Iterative: a deeply nested JSON body must not exhaust the stack.
 */
function findNulCharacter(value: unknown, where: string): string | undefined {
  const pending: Array<[unknown, string]> = [[value, where]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, path] = next;
    if (typeof item === 'string') {
      if (item.includes('\u0000')) return path;
    } else if (typeof item === 'object' && item !== null) {
      for (const [key, child] of Object.entries(item)) {
        if (key.includes('\u0000')) return path;
        pending.push([child, `${path}.${key}`]);
      }
    }
  }
  return undefined;
}

function parsePart<S extends Schema | undefined>(schema: S, value: unknown, where: string): Out<S> {
  if (schema === undefined) return undefined as Out<S>;
  const nulAt = findNulCharacter(value, where);
  if (nulAt !== undefined) throw new BadRequestError(`${nulAt}: must not contain a NUL character`, { issues: [{ path: nulAt, message: 'must not contain a NUL character' }] });
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new BadRequestError(formatIssues(where, result.error.issues), { issues: result.error.issues.map((i) => ({ path: [where, ...i.path.map(String)].join('.'), message: i.message })) });
  }
  return result.data as Out<S>;
}

/** The values of the headers `schema` names, under its (case-preserving) names. */
function declaredHeaders(schema: HeaderSchema | undefined, req: Request): Record<string, string | undefined> {
  return Object.fromEntries(Object.keys(schema?.shape ?? {}).map((name) => [name, req.header(name)]));
}

/** A test aid: an answer that does not match the schema the OpenAPI document promises is a bug. */
function checkResponse(route: AnyRoute, status: number, body: unknown): void {
  const schema = status === (route.successStatus ?? 200) ? route.response : route.errorBodies?.[status];
  if (schema === undefined) return;
  const result = schema.safeParse(body);
  if (!result.success) throw new Error(`${route.operationId} answered ${status} with a body that does not match its declared schema: ${formatIssues('response', result.error.issues)}`);
}

async function runRoute(route: AnyRoute, req: Request, res: Response, checkResponses: boolean, authenticate: Authenticate, shared: ReadCoalescer<unknown>): Promise<void> {
  const principal = await admit(req, route.permission, authenticate);
  // express 5 parses the query string again on every read of req.query: read it once.
  const rawQuery = req.query;
  parsePart(remoteNodeQuery, { remoteNode: rawQuery.remoteNode }, 'query');
  const params: unknown = parsePart(route.params, req.params, 'path');
  const query: unknown = parsePart(route.query, rawQuery, 'query');
  const body: unknown = parsePart(route.body, req.body ?? {}, 'body');
  const headers = parsePart(route.headers, declaredHeaders(route.headers, req), 'header');
  const stillAdmitted = (): Promise<boolean> => admit(req, route.permission, authenticate).then(() => true, () => false);
  const answer = (): Promise<unknown> => route.handler({ params, query, body, headers, principal, stillAdmitted, req, res });
  // req.url is the path below the API's mount with the query string as sent.
  const result = route.shareAnswers === true ? await shared.read(`${route.operationId} ${req.url}`, answer) : await answer();
  if (result === HANDLED) return;
  if (result instanceof JsonText) {
    const status = route.successStatus ?? 200;
    if (checkResponses) checkResponse(route, status, JSON.parse(result.body.toString()));
    sendJson(res, status, result.body);
    return;
  }
  const status = result instanceof Reply ? result.status : (route.successStatus ?? 200);
  const payload = result instanceof Reply ? result.body : result;
  if (checkResponses && payload !== undefined) checkResponse(route, status, payload);
  if (payload === undefined || status === 204) res.status(status).end();
  else sendJson(res, status, JSON.stringify(payload));
}

/** Told of every answered request, by the route's OpenAPI path (metrics). */
export type RequestObserver = (method: string, route: string, status: number, seconds: number) => void;

/** Binds every route to an express router; rejections reach the error middleware (express 5). */
export function mountRoutes(router: Router, routes: AnyRoute[], observe?: RequestObserver, checkResponses = false, authenticate: Authenticate = NO_CREDENTIALS): void {
  const shared = new ReadCoalescer<unknown>();
  for (const route of sortBySpecificity(routes)) {
    router[route.method](toExpressPath(route.path), (req: Request, res: Response) => {
      setMatchedRoute(res, route.path);
      if (observe !== undefined) {
        const started = process.hrtime.bigint();
        res.once('finish', () => observe(route.method.toUpperCase(), route.path, res.statusCode, Number(process.hrtime.bigint() - started) / 1e9));
      }
      return runRoute(route, req, res, checkResponses, authenticate, shared);
    });
  }
}
