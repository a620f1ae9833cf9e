import { UnauthorizedError } from '@trellis/core';
import type { OidcConfig } from '../config/schema.js';
import { ROLES, type Role } from './principal.js';

/** What the provider says about the user: ID token claims over the userinfo answer. */
export type Claims = { sub: string } & Record<string, unknown>;

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/** A provider on this host may be reached over plain HTTP (development, tests); any other needs HTTPS. */
export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK.has(hostname);
}

/** The configured claim when it is a valid username (1-64 characters, no ':' or control characters), else the subject. */
export function usernameFromClaims(claims: Claims, usernameClaim: string): string {
  const named = claims[usernameClaim];
  const username = typeof named === 'string' && named !== '' ? named : claims.sub;
  if (username.length > 64 || !/^[^:\p{Cc}]+$/u.test(username)) throw new UnauthorizedError(`the identity provider's ${usernameClaim} claim is not a valid username`);
  return username;
}

/** The strongest role any value of the role claim maps to, else the default role; undefined: no role, no login. */
export function roleFromClaims(claims: Claims, config: Pick<OidcConfig, 'roleClaim' | 'roleMap' | 'defaultRole'>): Role | undefined {
  const raw = config.roleClaim !== undefined ? claims[config.roleClaim] : undefined;
  const values = (Array.isArray(raw) ? raw : [raw]).filter((v): v is string => typeof v === 'string');
  const mapped = values.map((v) => config.roleMap[v]).filter((r): r is Role => r !== undefined);
  // ROLES lists the strongest first.
  const strongest = ROLES.find((role) => mapped.includes(role));
  return strongest ?? config.defaultRole;
}
