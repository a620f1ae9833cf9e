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

/** Whether `password` matches `hash`; without a hash (unknown user) it spends the same time and says no. */
export async function verifyPassword(password: string, hash: string | undefined): Promise<boolean> {
  const matches = await bcrypt.compare(password, hash ?? (await dummy()));
  return hash !== undefined && matches;
}
