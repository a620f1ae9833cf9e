import { createHmac, timingSafeEqual } from 'node:crypto';
import { UnauthorizedError } from '@trellis/core';

/** Signed calls older (or further in the future) than this are refused: a captured call cannot be replayed later. */
export const SIGNATURE_TOLERANCE_SEC = 300;

export interface SignatureHeaders {
  /** `X-Svc-Timestamp`: Unix seconds when the sender signed. */
  timestamp: string | undefined;
  /** `X-Svc-Signature`: `sha256=<hex HMAC-SHA256 of "<timestamp>.<raw body>">`. */
  signature: string | undefined;
}

/** What a sender signs: the timestamp is inside the MAC, so it cannot be refreshed on a replay. */
export function signedContent(timestamp: string, rawBody: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${timestamp}.`), rawBody]);
}

export function sign(secret: string, timestamp: string, rawBody: Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(signedContent(timestamp, rawBody)).digest('hex')}`;
}

/** Throws 401 unless the call carries a fresh timestamp and a matching signature. */
export function verifySignature(secret: string, headers: SignatureHeaders, rawBody: Buffer, now = Date.now()): void {
  const { timestamp, signature } = headers;
  if (timestamp === undefined || signature === undefined) throw new UnauthorizedError('this webhook requires signed calls: send X-Svc-Timestamp and X-Svc-Signature');
  if (!/^\d{1,12}$/.test(timestamp)) throw new UnauthorizedError('X-Svc-Timestamp must be Unix seconds');
  if (Math.abs(now / 1000 - Number(timestamp)) > SIGNATURE_TOLERANCE_SEC) throw new UnauthorizedError(`X-Svc-Timestamp is more than ${SIGNATURE_TOLERANCE_SEC} seconds away from now`);
  const expected = Buffer.from(sign(secret, timestamp, rawBody));
  const given = Buffer.from(signature.trim().toLowerCase());
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new UnauthorizedError('X-Svc-Signature does not match the body');
}
