import type jwt from 'jsonwebtoken';

export type JwtLibrary = typeof jwt;

let loaded: Promise<JwtLibrary> | undefined;

/**
 * jsonwebtoken, loaded at its first use: only builtin logins, single sign-on and a Pro
 * license need it, and with its dependencies it would hold several MB in every coordinator.
 */
export function jwtLibrary(): Promise<JwtLibrary> {
  loaded ??= import('jsonwebtoken').then((module) => module.default);
  return loaded;
}
