import { ForbiddenError, toError } from '@trellis/core';
import { jwtLibrary } from './jwt-library.js';

const PRO_REQUIRED = 'user management requires a Pro license';

/**
 * The Pro license: a token signed by the vendor's private key, checked with the public key the
 * operator configures, at every use (it may expire while the server runs).
 */
export class LicenseGate {
  constructor(
    private readonly license: string | undefined,
    private readonly publicKey: string | undefined,
  ) {}

  /** Throws 403 unless a valid, unexpired license is configured. */
  async requirePro(): Promise<void> {
    if (this.license === undefined || this.publicKey === undefined) throw new ForbiddenError(PRO_REQUIRED);
    const jwt = await jwtLibrary();
    try {
      const payload = jwt.verify(this.license, this.publicKey, { algorithms: ['RS256', 'ES256'] });
      if (typeof payload === 'string' || payload.exp === undefined) throw new Error('a license must expire');
    } catch (error) {
      throw new ForbiddenError(`${PRO_REQUIRED}: the configured license is not valid (${toError(error).message})`);
    }
  }
}
