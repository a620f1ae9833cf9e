import { readFileSync } from 'node:fs';
import { timingSafeEqual } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { WORKER_AUTH_METADATA } from '@trellis/core';

export interface GrpcSecurity {
  workerToken?: string;
  tlsCert?: string;
  tlsKey?: string;
  /** CA that worker client certificates must chain to; setting it requires them. */
  tlsClientCa?: string;
}

/** Plain text on loopback; TLS (and optionally client certificates) when a certificate is configured. */
export function serverCredentials(security: GrpcSecurity): grpc.ServerCredentials {
  if (security.tlsCert === undefined || security.tlsKey === undefined) return grpc.ServerCredentials.createInsecure();
  const ca = security.tlsClientCa !== undefined ? readFileSync(security.tlsClientCa) : null;
  return grpc.ServerCredentials.createSsl(ca, [{ cert_chain: readFileSync(security.tlsCert), private_key: readFileSync(security.tlsKey) }], ca !== null);
}

/** True when the call carries the configured token (every call does, when one is configured). */
export function hasValidToken(metadata: grpc.Metadata, expected: string | undefined): boolean {
  if (expected === undefined) return true;
  const [header] = metadata.get(WORKER_AUTH_METADATA);
  if (typeof header !== 'string' || !header.startsWith('Bearer ')) return false;
  const given = Buffer.from(header.slice('Bearer '.length));
  const wanted = Buffer.from(expected);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}
