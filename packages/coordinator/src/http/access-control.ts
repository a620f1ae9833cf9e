import type { Request } from 'express';
import { authorize } from '../auth/access.js';
import type { Permission } from '../auth/permissions.js';
import type { Principal } from '../auth/principal.js';

/**
 * The authentication step as the HTTP edge sees it: an `Authorization` header and the caller's
 * address (password guesses are throttled per address) in, a principal (or none) out.
 */
export type Authenticate = (authorization: string | undefined, address: string) => Promise<Principal | undefined>;

/** The socket's peer: no proxy header is trusted, so a client cannot choose its own address. */
export function sourceAddress(req: Request): string {
  return req.socket.remoteAddress ?? 'unknown';
}

/** Without an authentication step no request carries credentials: only public routes answer. */
export const NO_CREDENTIALS: Authenticate = () => Promise.resolve(undefined);

/**
 * Every request passes here before its route parses anything: who is calling, and may they
 * call this route. Public routes skip authentication (a stale token must not lock out login);
 * so does the webhook route, which checks its DAG's own token (and signature) itself.
 */
export async function admit(req: Request, permission: Permission, authenticate: Authenticate): Promise<Principal | undefined> {
  if (permission === 'public' || permission === 'webhook') return undefined;
  const principal = await authenticate(req.headers.authorization, sourceAddress(req));
  authorize(principal, permission);
  return principal;
}
