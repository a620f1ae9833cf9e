import type { Db } from '@trellis/store';
import type { ResolvedAuthConfig } from '../config/load.js';
import { AuditTrail } from './audit.js';
import { Authenticator, type ApiKeyResolver } from './authenticator.js';
import { LicenseGate } from './license.js';
import { LoginThrottle } from './login-throttle.js';
import { LoginTokens } from './login-tokens.js';
import { OidcLogin } from './oidc-login.js';
import { prepareDummyHash } from './passwords.js';
import { UserService } from './user-service.js';

export interface AccessControl {
  authenticator: Authenticator;
  users: UserService;
  audit: AuditTrail;
  /** Single sign-on (answers 404 while `auth.oidc` is not configured). */
  oidc: OidcLogin;
}

/**
 * The authentication step and the user service for the configured mode. `apiKeys` resolves
 * `Bearer svc_...` secrets (the API key and webhook service supplies it); without it they are 401.
 */
export async function openAccessControl(auth: ResolvedAuthConfig, db: Db, apiKeys?: ApiKeyResolver): Promise<AccessControl> {
  const tokens = auth.mode === 'builtin' ? await LoginTokens.open(db, auth.tokenSecret, auth.tokenTtlSec) : undefined;
  if (auth.mode !== 'none') await prepareDummyHash();
  const throttle = new LoginThrottle(db);
  const audit = new AuditTrail(db);
  const authenticator = new Authenticator({ auth, db, throttle, audit, ...(tokens !== undefined ? { tokens } : {}), ...(apiKeys !== undefined ? { apiKeys } : {}) });
  const users = new UserService({ db, authenticator, tokens, license: new LicenseGate(auth.license, auth.licensePublicKey), throttle, audit });
  const oidc = new OidcLogin({ db, config: auth.oidc, tokens, audit, forget: (userId) => authenticator.forget(userId) });
  return { authenticator, users, audit, oidc };
}
