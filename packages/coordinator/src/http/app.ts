import express, { type Express } from 'express';
import { errorHandler, notFoundHandler } from './error-handler.js';
import { accessLog } from './access-log.js';
import { keepRawBody } from './raw-body.js';
import { browserProtection, type BrowserProtectionOptions } from './browser-protection.js';
import { assignRequestId } from './request-id.js';
import { uiAssets } from './ui-assets.js';
import { buildOpenApiDocument, openApiDocumentSchema } from './openapi.js';
import { defineRoute, mountRoutes, type AnyRoute, type RequestObserver } from './routes.js';
import type { Logger } from '../logging/logger.js';
import type { Authenticate } from './access-control.js';

export interface HttpAppOptions {
  routes: AnyRoute[];
  logger: Logger;
  /** Service base path ('' or '/mount'). */
  basePath: string;
  /** API path under the base path ('/api/v1'). */
  apiBasePath: string;
  version: string;
  /** Largest accepted JSON body; DAG specs are the big ones. */
  bodyLimit?: string;
  observe?: RequestObserver;
  /** Check every JSON answer against its route's declared schema; a mismatch is a 500 (tests). */
  checkResponses?: boolean;
  /** Log one info line per request (default true). */
  accessLog?: boolean;
  /** Host and origin checks against browsers (default: loopback names and IP literals only). */
  browser?: BrowserProtectionOptions;
  /** The built web UI to serve at the base path, when it holds one. */
  uiDir?: string;
  /** The authentication step (default: no request carries credentials, so only public routes answer). */
  authenticate?: Authenticate;
}

/** The full API path, as clients and `servers[0].url` see it. */
export function apiMountPath(options: Pick<HttpAppOptions, 'basePath' | 'apiBasePath'>): string {
  return `${options.basePath}${options.apiBasePath}`;
}

function openApiRoute(getRoutes: () => AnyRoute[], options: HttpAppOptions): AnyRoute {
  let cached: unknown;
  return defineRoute({
    method: 'get',
    path: '/openapi.json',
    operationId: 'getOpenApi',
    summary: 'The OpenAPI 3.0.0 document of this API',
    tag: 'system',
    // The contract: authenticated like the rest of the API.
    permission: 'authenticated',
    response: openApiDocumentSchema,
    handler: () => {
      cached ??= buildOpenApiDocument(getRoutes(), { apiBasePath: apiMountPath(options), version: options.version });
      return Promise.resolve(cached);
    },
  });
}

/** Express app serving the API routes under the mounted API path, with one error mapping. */
export function createHttpApp(options: HttpAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  // No ETag on answers: express hashes every body for one (about 6% of what a 100-item list cost
  // the coordinator) and no client of the API revalidates; lists change as runs do. The UI's
  // files keep express.static's own validators; only its HTML shell (a few KB) is sent whole.
  app.set('etag', false);
  app.set('query parser', 'extended');
  app.use(assignRequestId);
  if (options.accessLog ?? true) app.use(accessLog(options.logger));
  app.use(browserProtection(options.browser ?? { allowedHosts: [], allowedOrigins: [] }));
  const api = express.Router({ strict: false });
  api.use(express.json({ limit: options.bodyLimit ?? '10mb', strict: false, verify: keepRawBody }));
  const routes: AnyRoute[] = [...options.routes];
  routes.push(openApiRoute(() => routes, options));
  mountRoutes(api, routes, options.observe, options.checkResponses, options.authenticate);
  api.use(notFoundHandler);
  api.use(errorHandler(options.logger));
  app.use(apiMountPath(options), api);
  const ui = options.uiDir !== undefined ? uiAssets({ dir: options.uiDir, basePath: options.basePath, apiPath: apiMountPath(options) }) : undefined;
  if (ui !== undefined) app.use(options.basePath === '' ? '/' : options.basePath, ui);
  app.use(errorHandler(options.logger));
  return app;
}
