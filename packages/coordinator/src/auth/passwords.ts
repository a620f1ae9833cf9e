import bcrypt from 'bcryptjs';
import { BadRequestError } from '@trellis/core';

/** The contract's cost. */
const COST = 12;
export const MIN_PASSWORD_LENGTH = 8;
/** bcrypt reads no further: longer passwords would be silently cut, so they are refused. */
const MAX_PASSWORD_BYTES = 72;

/**
 * Compared against when the username is unknown, so the answer takes as long as for a known one.
 * Made on first use, asynchronously: hashing at import would block every process that loads this.
 */
let dummyHash: Promise<string> | undefined;
const dummy = (): Promise<string> => (dummyHash ??= bcrypt.hash('trellis-dummy-password', COST));

/** Makes the dummy hash ahead of the first login, so even that one takes no longer for an unknown user. */
export async function prepareDummyHash(): Promise<void> {
  await dummy();
}

export function checkPasswordStrength(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH) throw new BadRequestError(`password must be at least ${MIN_PASSWORD_LENGTH} characters`);
  if (Buffer.byteLength(password, 'utf8') > MAX_PASSWORD_BYTES) throw new BadRequestError(`password must be at most ${MAX_PASSWORD_BYTES} bytes`);
}

export function hashPassword(password: string): Promise<string> {
  return bcrypt.hash(password, COST);
}

/** A bcrypt hash as bcryptjs produces it: anything else (a single sign-on user's `!`) matches nothing. */
const BCRYPT_HASH = /^\$2[aby]\$\d{2}\$[./A-Za-z0-9]{53}$/;

/**
 * Whether `password` matches `hash`. Without a usable hash (unknown user, single sign-on user)
 * it compares against the dummy and says no: bcryptjs answers at once for a malformed hash, and
 * the time must not tell which usernames exist or sign on elsewhere.
 */
export async function verifyPassword(password: string, hash: string | undefined): Promise<boolean> {
  const usable = hash !== undefined && BCRYPT_HASH.test(hash);
  const matches = await bcrypt.compare(password, usable ? hash : await dummy());
  return usable && matches;
}
