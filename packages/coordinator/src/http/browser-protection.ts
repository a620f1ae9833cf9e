import { isIP } from 'node:net';
import type { NextFunction, Request, Response } from 'express';
import { BadRequestError, ForbiddenError } from '@trellis/core';

/**
 * Keeps a web page the operator happens to visit from driving the API, auth or not:
 * - `Host` must name this service: a DNS-rebinding page reaches us under its own name.
 * - State-changing requests with a body must say JSON: browsers send `text/plain` and form
 *   bodies cross-site without a CORS preflight, JSON only after one (which we never grant).
 * - State-changing requests that carry an `Origin` must come from this service's own origin
 *   or one the operator configured.
 * Clients that are not browsers (curl, the CLI, webhook senders) send no `Origin` and JSON.
 */
export interface BrowserProtectionOptions {
  /** Host names (without port) accepted besides loopback names and IP literals; `*` accepts any. */
  allowedHosts: readonly string[];
  /** Origins (`scheme://host[:port]`) besides the service's own allowed to send state-changing requests. */
  allowedOrigins: readonly string[];
}

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '::1'];
const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** `example.com:8080` -> `example.com`; `[::1]:8080` -> `::1`. */
function hostNameOf(host: string): string {
  const name = host.startsWith('[') ? host.slice(1, host.indexOf(']')) : host.replace(/:\d*$/, '');
  return name.toLowerCase().replace(/\.$/, '');
}

function normalizeOrigin(origin: string): string {
  return origin.trim().toLowerCase().replace(/\/+$/, '');
}

/** Whether a request carries a body: bodiless POSTs (start without parameters) need no content type. */
function hasBody(req: Request): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const length = req.headers['content-length'];
  return length !== undefined && length !== '0';
}

export function browserProtection(options: BrowserProtectionOptions) {
  const anyHost = options.allowedHosts.includes('*');
  const hosts = new Set([...LOOPBACK_NAMES, ...options.allowedHosts.map(hostNameOf)]);
  const origins = new Set(options.allowedOrigins.map(normalizeOrigin));
  const hostAllowed = (host: string): boolean => {
    const name = hostNameOf(host);
    // An IP literal cannot be rebound: a page showing it as its origin was served by us.
    return anyHost || hosts.has(name) || isIP(name) !== 0;
  };
  return (req: Request, _res: Response, next: NextFunction): void => {
    const host = req.headers.host;
    if (host !== undefined && !hostAllowed(host)) {
      next(new ForbiddenError(`host "${hostNameOf(host)}" is not one of this service's names; add it to allowedHosts (SVC_ALLOWED_HOSTS)`));
      return;
    }
    const origin = req.headers.origin;
    // A browser marks what another site makes it send. Refused whatever the method: the contract
    // has a state-changing GET (dequeue), which an <img> on any page would otherwise reach.
    if (req.headers['sec-fetch-site'] === 'cross-site' && (origin === undefined || !origins.has(normalizeOrigin(origin)))) {
      next(new ForbiddenError('cross-site request refused; add the origin to allowedOrigins (SVC_ALLOWED_ORIGINS)'));
      return;
    }
    if (!STATE_CHANGING.has(req.method)) {
      next();
      return;
    }
    if (origin !== undefined) {
      const own = host !== undefined ? `${req.protocol}://${host.toLowerCase()}` : undefined;
      const normalized = normalizeOrigin(origin);
      if (normalized !== own && !origins.has(normalized)) {
        next(new ForbiddenError(`cross-origin request from ${origin} refused; add the origin to allowedOrigins (SVC_ALLOWED_ORIGINS)`));
        return;
      }
    }
    if (hasBody(req) && req.is('application/json') !== 'application/json') {
      next(new BadRequestError(`request bodies must be JSON (Content-Type: application/json), got ${req.headers['content-type'] ?? 'none'}`));
      return;
    }
    next();
  };
}
