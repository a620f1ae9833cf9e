import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import express, { type Router } from 'express';

export interface UiAssetsOptions {
  /** The UI's build output (index.html and assets/). */
  dir: string;
  /** Service base path ('' or '/mount'). */
  basePath: string;
  /** The full API path the page calls ('/mount/api/v1'). */
  apiPath: string;
}

/**
 * The page shell with where it is mounted written in: a `<base>` so relative asset URLs resolve
 * from any deep link, and the API path the app calls.
 */
function pageShell(indexHtml: string, basePath: string, apiPath: string): string {
  const head = `<base href="${basePath}/"><meta name="trellis-api" content="${apiPath}">`;
  return indexHtml.replace('<!--trellis-mount-->', head);
}

/**
 * Serves the built single-page app, or nothing when it was not built (tests start coordinators
 * without it): hashed assets with long caching, and the shell for every other GET under the
 * base path that is not the API, so a reloaded deep link opens its page.
 */
export function uiAssets(options: UiAssetsOptions): Router | undefined {
  const index = join(options.dir, 'index.html');
  if (!existsSync(index)) return undefined;
  const shell = pageShell(readFileSync(index, 'utf8'), options.basePath, options.apiPath);
  const router = express.Router();
  // A missing asset is a stale page asking for an old build's file: a 404, never the shell.
  router.use('/assets', express.static(join(options.dir, 'assets'), { immutable: true, maxAge: '365d', index: false }), (_req, res) => {
    res.status(404).type('text/plain').send('no such asset');
  });
  router.use(express.static(options.dir, { index: false }));
  // The API router, mounted before this one, answers every path under the API itself (404s too).
  router.get('/{*page}', (_req, res) => {
    res.status(200).set({ 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache' }).send(shell);
  });
  return router;
}
