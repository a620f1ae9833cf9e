import type { ServerConfig } from '../config/load.js';

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

/** Whether a listening address is reachable from this host only. */
export function isLoopbackHost(host: string): boolean {
  return LOOPBACK.has(host);
}

/**
 * Without credentials, anyone who reaches the API can define and run shell steps: on any address
 * beyond loopback that needs the operator's explicit word.
 */
export function checkHttpExposure(config: Pick<ServerConfig, 'host' | 'auth'>): void {
  if (config.auth.mode !== 'none' || config.auth.allowUnauthenticated || isLoopbackHost(config.host)) return;
  throw new Error(
    `the HTTP API listens on ${config.host}, beyond loopback, with auth.mode none (SVC_AUTH_MODE): anyone who can reach it can run commands. ` +
      'Set auth.mode to builtin or basic, or set auth.allowUnauthenticated: true (SVC_AUTH_ALLOW_UNAUTHENTICATED) to accept that',
  );
}
