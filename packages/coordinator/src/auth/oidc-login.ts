import { randomBytes, randomUUID } from 'node:crypto';
import type * as Oidc from 'openid-client';
import { getUserByOidcIdentity, insertOidcUser, sharedSecret, updateUser, UsernameTakenError, type Queryable, type UserRecord } from '@trellis/store';
import { NotFoundError, ServiceUnavailableError, toError, TrellisError, UnauthorizedError } from '@trellis/core';
import type { OidcConfig } from '../config/schema.js';
import type { AuditTrail } from './audit.js';
import { jwtLibrary } from './jwt-library.js';
import type { LoginTokens } from './login-tokens.js';
import { isLoopbackHost, roleFromClaims, usernameFromClaims, type Claims } from './oidc-claims.js';
import type { Principal, Role } from './principal.js';
import { userView, type SessionView } from './user-service.js';

/** The login in progress, kept by the browser in a signed cookie so any coordinator can finish it. */
interface PendingLogin {
  state: string;
  nonce: string;
  verifier: string;
}

export interface StartedLogin {
  /** Where the browser goes: the provider's authorization endpoint. */
  authorizationUrl: string;
  /** The signed pending login for the `OIDC_STATE_COOKIE` cookie. */
  cookie: string;
}

export interface OidcLoginDeps {
  db: Queryable;
  config: OidcConfig | undefined;
  tokens: LoginTokens | undefined;
  audit: AuditTrail;
  /** Told when a login changed a user's role, so cached principals of it are dropped. */
  forget(userId: string): void;
}

export const OIDC_STATE_COOKIE = 'trellis_oidc';
/** A login not finished within this is refused: the user starts again. */
export const OIDC_STATE_TTL_SEC = 600;
const STATE_AUDIENCE = 'trellis-oidc-state';

/** A login refused for a reason worth auditing; answered 401 like every failed login. */
class RefusedLogin extends UnauthorizedError {
  constructor(
    message: string,
    readonly reason: string,
    readonly username?: string,
  ) {
    super(message);
  }
}

/** Single sign-on: authorization code with PKCE against the configured provider, then the usual login token. */
export class OidcLogin {
  private provider: Promise<Oidc.Configuration> | undefined;
  private stateKey: Promise<string> | undefined;

  constructor(private readonly deps: OidcLoginDeps) {}

  /** The provider's authorization URL for a new login, and the cookie that lets the callback finish it. */
  async start(): Promise<StartedLogin> {
    const config = this.configured();
    const provider = await this.discover().catch((error: unknown) => {
      throw new ServiceUnavailableError(`the identity provider cannot be reached: ${toError(error).message}`);
    });
    const oidc = await oidcLibrary();
    const pending: PendingLogin = { state: oidc.randomState(), nonce: oidc.randomNonce(), verifier: oidc.randomPKCECodeVerifier() };
    const url = oidc.buildAuthorizationUrl(provider, {
      redirect_uri: config.redirectUrl,
      scope: config.scopes.join(' '),
      state: pending.state,
      nonce: pending.nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(pending.verifier),
      code_challenge_method: 'S256',
    });
    const cookie = (await jwtLibrary()).sign(pending, await this.key(), { algorithm: 'HS256', audience: STATE_AUDIENCE, expiresIn: OIDC_STATE_TTL_SEC });
    return { authorizationUrl: url.href, cookie };
  }

  /**
   * Finishes a login from the provider's redirect (`search` is its query string, `cookie` the
   * pending login): the code is exchanged, the claims mapped to a role, the user found or made.
   * Anything that goes wrong, the provider's refusals included, is a 401 and an audited failure.
   */
  async finish(search: string, cookie: string | undefined, address: string): Promise<SessionView> {
    const config = this.configured();
    try {
      return await this.complete(config, search, cookie, address);
    } catch (error) {
      const refused = error instanceof RefusedLogin ? error : undefined;
      const reason = refused?.reason ?? (error instanceof TrellisError ? error.message : `provider: ${toError(error).message}`);
      await this.deps.audit.record('auth.login.failed', undefined, `failed single sign-on${refused?.username !== undefined ? ` for ${refused.username}` : ''}`, {
        provider: 'oidc',
        address,
        reason,
        ...(refused?.username !== undefined ? { username: refused.username } : {}),
      });
      if (error instanceof UnauthorizedError) throw error;
      throw new UnauthorizedError('single sign-on failed: the identity provider did not confirm the login');
    }
  }

  private async complete(config: OidcConfig, search: string, cookie: string | undefined, address: string): Promise<SessionView> {
    const pending = await this.pending(cookie);
    const callback = new URL(config.redirectUrl);
    callback.search = search;
    const provider = await this.discover();
    const oidc = await oidcLibrary();
    const tokens = await oidc.authorizationCodeGrant(provider, callback, { pkceCodeVerifier: pending.verifier, expectedState: pending.state, expectedNonce: pending.nonce, idTokenExpected: true });
    const idClaims = tokens.claims();
    if (idClaims === undefined) throw new RefusedLogin('single sign-on failed: no ID token', 'no ID token');
    // Many providers put profile and group claims only in the userinfo answer.
    const userInfo = provider.serverMetadata().userinfo_endpoint !== undefined ? await oidc.fetchUserInfo(provider, tokens.access_token, idClaims.sub) : {};
    const claims: Claims = { ...userInfo, ...idClaims };
    const user = await this.account(config, claims);
    if (user.isDisabled) throw new RefusedLogin('this account is disabled', 'user disabled', user.username);
    await this.deps.audit.record('auth.login.succeeded', principalOf(user), `${user.username} logged in through single sign-on`, { provider: 'oidc', address });
    return { ...this.loginTokens().issue({ userId: user.id, generation: user.tokenGeneration }), user: userView(user) };
  }

  /** The user the provider vouched for, made at the first login when provisioning is on; its role follows the claims at every login. */
  private async account(config: OidcConfig, claims: Claims): Promise<UserRecord> {
    const identity = `${config.issuer} ${claims.sub}`;
    const username = usernameFromClaims(claims, config.usernameClaim);
    const role = roleFromClaims(claims, config);
    if (role === undefined) throw new RefusedLogin('no role for this user: none of its groups is mapped and there is no default role', 'no role', username);
    const known = await getUserByOidcIdentity(this.deps.db, identity);
    if (known !== undefined && known.role !== role) {
      const changed = (await updateUser(this.deps.db, known.id, { role })) ?? known;
      this.deps.forget(known.id);
      await this.deps.audit.record('user.updated', principalOf(changed), `role of ${changed.username} set to ${role} by single sign-on`, { targetUserId: known.id, changed: ['role'], role, provider: 'oidc' });
      return changed;
    }
    if (known !== undefined) return known;
    if (!config.autoProvision) throw new RefusedLogin(`no account for ${username}: automatic provisioning is off`, 'unknown user', username);
    try {
      const made = await insertOidcUser(this.deps.db, { id: randomUUID(), username, role, identity });
      await this.deps.audit.record('user.created', principalOf(made), `user ${made.username} provisioned by single sign-on`, { targetUserId: made.id, username, role, provider: 'oidc' });
      return made;
    } catch (error) {
      if (error instanceof UsernameTakenError) throw new RefusedLogin(`username ${username} belongs to another account`, 'username taken', username);
      throw error;
    }
  }

  private async pending(cookie: string | undefined): Promise<PendingLogin> {
    if (cookie === undefined) throw new RefusedLogin('unknown or expired single sign-on state: start the login again', 'no login state');
    const jwt = await jwtLibrary();
    try {
      const payload = jwt.verify(cookie, await this.key(), { algorithms: ['HS256'], audience: STATE_AUDIENCE });
      if (typeof payload === 'string' || typeof payload.state !== 'string' || typeof payload.nonce !== 'string' || typeof payload.verifier !== 'string') throw new Error('malformed');
      return { state: payload.state, nonce: payload.nonce, verifier: payload.verifier };
    } catch {
      throw new RefusedLogin('unknown or expired single sign-on state: start the login again', 'bad login state');
    }
  }

  private configured(): OidcConfig {
    if (this.deps.config === undefined) throw new NotFoundError('single sign-on is not configured (auth.oidc)');
    return this.deps.config;
  }

  private loginTokens(): LoginTokens {
    if (this.deps.tokens === undefined) throw new NotFoundError('single sign-on needs auth.mode builtin');
    return this.deps.tokens;
  }

  /** Read once, and again after a failure (the provider may have been down). */
  private discover(): Promise<Oidc.Configuration> {
    const config = this.configured();
    if (this.provider === undefined) {
      const found = oidcLibrary().then((oidc) => {
        const issuer = new URL(config.issuer);
        const auth = config.clientSecret !== undefined ? oidc.ClientSecretBasic(config.clientSecret) : oidc.None();
        // Plain HTTP only to a provider on this host (the config refuses it elsewhere).
        const options = issuer.protocol === 'http:' && isLoopbackHost(issuer.hostname) ? { execute: [oidc.allowInsecureRequests] } : {};
        return oidc.discovery(issuer, config.clientId, undefined, auth, options);
      });
      found.catch(() => {
        if (this.provider === found) this.provider = undefined;
      });
      this.provider = found;
    }
    return this.provider;
  }

  /** The cookie signing key, shared by every coordinator of the database. */
  private key(): Promise<string> {
    this.stateKey ??= sharedSecret(this.deps.db, 'oidc_state_key', () => randomBytes(48).toString('base64url'));
    return this.stateKey;
  }
}

/** The OIDC client, loaded with the first single sign-on: a coordinator without one never holds it. */
function oidcLibrary(): Promise<typeof Oidc> {
  return import('openid-client');
}

function principalOf(user: UserRecord): Principal {
  return { kind: 'user', id: user.id, name: user.username, role: user.role as Role };
}
