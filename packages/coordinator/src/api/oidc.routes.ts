import type { Request } from 'express';
import { z } from 'zod';
import { sourceAddress } from '../http/access-control.js';
import { defineRoute, HANDLED, NO_CONTENT, type AnyRoute } from '../http/routes.js';
import { OIDC_STATE_COOKIE, OIDC_STATE_TTL_SEC, type OidcLogin } from '../auth/oidc-login.js';
import { sessionSchema } from './user.schemas.js';

/** The provider's redirect: a code and the state, or an error; other parameters (`iss`, `session_state`) pass. */
const callbackQuery = z.looseObject({
  code: z.string().max(4096).optional(),
  state: z.string().max(1024).optional(),
  error: z.string().max(256).optional(),
  error_description: z.string().max(2048).optional(),
});

/** One cookie of the request's `Cookie` header. */
function cookieOf(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return undefined;
}

/** The query string exactly as the provider sent it (the provider's parameters are checked by the client library). */
function searchOf(req: Request): string {
  const question = req.originalUrl.indexOf('?');
  return question < 0 ? '' : req.originalUrl.slice(question);
}

/**
 * Single sign-on. The browser opens `/auth/oidc/login`, signs in at the provider and comes back
 * to `/auth/oidc/callback`, which answers the same session as `/auth/login`. The pending login
 * (state, nonce, PKCE verifier) rides in a signed HttpOnly cookie scoped to the callback path;
 * SameSite=Lax, because the provider's redirect back is a cross-site navigation that a Strict
 * cookie would not follow.
 */
export function oidcRoutes(login: OidcLogin, redirectUrl: string | undefined): AnyRoute[] {
  const cookiePath = redirectUrl !== undefined ? new URL(redirectUrl).pathname : '/';
  const secure = redirectUrl?.startsWith('https:') ?? false;
  return [
    defineRoute({
      method: 'get',
      path: '/auth/oidc/login',
      operationId: 'startOidcLogin',
      permission: 'public',
      summary: 'Single sign-on: redirects (302) to the identity provider; 404 when auth.oidc is not configured',
      tag: 'auth',
      response: NO_CONTENT,
      successStatus: 302,
      errors: [404, 503],
      handler: async ({ res }) => {
        const started = await login.start();
        res.cookie(OIDC_STATE_COOKIE, started.cookie, { httpOnly: true, sameSite: 'lax', secure, path: cookiePath, maxAge: OIDC_STATE_TTL_SEC * 1000 });
        res.redirect(302, started.authorizationUrl);
        return HANDLED;
      },
    }),
    defineRoute({
      method: 'get',
      path: '/auth/oidc/callback',
      operationId: 'finishOidcLogin',
      permission: 'public',
      summary: "Single sign-on: the provider's redirect back; answers a token as /auth/login does, 401 when the provider or the state do not confirm the login",
      tag: 'auth',
      query: callbackQuery,
      response: sessionSchema,
      errors: [401, 404],
      handler: async ({ req, res }) => {
        // One use only, whatever the outcome.
        res.clearCookie(OIDC_STATE_COOKIE, { httpOnly: true, sameSite: 'lax', secure, path: cookiePath });
        return login.finish(searchOf(req), cookieOf(req, OIDC_STATE_COOKIE), sourceAddress(req));
      },
    }),
  ];
}
