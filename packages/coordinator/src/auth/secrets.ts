import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Characters of a secret kept for display (`svc_AbCd1234`): enough to tell keys apart, too few to guess the rest. */
const PREFIX_LENGTH = 12;

export interface IssuedSecret {
  /** Shown once, to whoever created it. */
  secret: string;
  hash: string;
  prefix: string;
}

/** The stored form of a secret: 32 random bytes (hex, so no key reads as `svc_wh_`) need no slow hash, and a fast one keeps checking cheap. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function issueSecret(prefix: string): IssuedSecret {
  const secret = `${prefix}${randomBytes(32).toString('hex')}`;
  return { secret, hash: hashSecret(secret), prefix: secret.slice(0, PREFIX_LENGTH) };
}

/** Constant-time comparison of two hex digests. */
export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}
