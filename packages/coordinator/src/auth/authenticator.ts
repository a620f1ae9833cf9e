import { createHash, timingSafeEqual } from 'node:crypto';
import { getUserById, getUserByUsername, type Queryable, type UserRecord } from '@trellis/store';
import type { ResolvedAuthConfig } from '../config/load.js';
import type { LoginThrottle } from './login-throttle.js';
import type { AuditTrail } from './audit.js';
import type { LoginTokens } from './login-tokens.js';
import { verifyPassword } from './passwords.js';
import { ANONYMOUS, ROLES, type Principal, type Role } from './principal.js';
import { UnauthorizedError } from '@trellis/core';

/**
 * Resolves a `Bearer svc_...` secret (API keys, webhook tokens) to its principal; undefined when
 * no key matches. Supplied by the API key service; without one such tokens are refused.
 */
export type ApiKeyResolver = (token: string) => Promise<Principal | undefined>;

/** A disabled user or a changed password reaches every coordinator's cache within this. */
const USER_CACHE_MS = 500;
/** A Basic credential that matched is not checked with bcrypt again for this long (cost 12 takes ~200 ms). */
const BASIC_CACHE_MS = 60_000;
const BASIC_CACHE_MAX = 1000;
const INVALID = 'invalid or expired credentials';

export interface AuthenticatorOptions {
  auth: ResolvedAuthConfig;
  db: Queryable;
  /** Builtin mode: the login token checker. */
  tokens?: LoginTokens;
  apiKeys?: ApiKeyResolver;
  /** Basic credentials are password guesses too: counted and blocked like logins. */
  throttle?: LoginThrottle;
  /** Failed Basic credentials are failed logins in the audit trail. */
  audit?: AuditTrail;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

function isRole(role: string): role is Role {
  return (ROLES as readonly string[]).includes(role);
}

/** `Authorization: Basic` as user and password; undefined when malformed. */
function parseBasic(encoded: string): { username: string; password: string } | undefined {
  const text = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  return colon <= 0 ? undefined : { username: text.slice(0, colon), password: text.slice(colon + 1) };
}

/** The authentication step: one `Authorization` header in, one principal out. */
export class Authenticator {
  private readonly users = new Map<string, { user: UserRecord | undefined; at: number }>();
  private readonly basicHits = new Map<string, { userId: string; generation: number; at: number }>();

  constructor(private readonly options: AuthenticatorOptions) {}

  get mode(): ResolvedAuthConfig['mode'] {
    return this.options.auth.mode;
  }

  /**
   * The principal of a request: ANONYMOUS while auth is off; undefined when the request carries
   * no credentials; a 401 for credentials that are wrong, expired or of a disabled user.
   */
  async authenticate(header: string | undefined, address: string): Promise<Principal | undefined> {
    if (this.mode === 'none') return ANONYMOUS;
    if (header === undefined || header === '') return undefined;
    const space = header.indexOf(' ');
    const scheme = header.slice(0, space).toLowerCase();
    const credential = header.slice(space + 1).trim();
    if (space > 0 && scheme === 'basic') return this.basic(credential, address);
    if (space > 0 && scheme === 'bearer' && credential !== '') return this.bearer(credential);
    throw new UnauthorizedError('unsupported Authorization header: use Bearer <token> or Basic <credentials>');
  }

  /** Drops what this coordinator remembers of a user (after a change made here). */
  forget(userId: string): void {
    this.users.delete(userId);
    for (const [key, hit] of this.basicHits) if (hit.userId === userId) this.basicHits.delete(key);
  }

  private async bearer(token: string): Promise<Principal> {
    if (token.startsWith('svc_')) {
      // The contract: API keys (and webhook tokens) need built-in auth.
      const resolve = this.mode === 'builtin' ? this.options.apiKeys : undefined;
      const principal = resolve !== undefined ? await resolve(token) : undefined;
      if (principal === undefined) throw new UnauthorizedError('invalid API key');
      return principal;
    }
    const claims = this.mode === 'builtin' ? this.options.tokens?.verify(token) : undefined;
    if (claims === undefined) throw new UnauthorizedError(INVALID);
    return this.activeUser(claims.userId, claims.generation);
  }

  private async basic(encoded: string, address: string): Promise<Principal> {
    const given = parseBasic(encoded);
    if (given === undefined) throw new UnauthorizedError('malformed Basic credentials');
    const key = digest(encoded).toString('base64');
    const hit = this.basicHits.get(key);
    if (hit !== undefined && Date.now() - hit.at < BASIC_CACHE_MS) return this.mode === 'basic' ? this.configuredPrincipal() : this.activeUser(hit.userId, hit.generation);
    const throttle = this.options.throttle;
    const guess = async (): Promise<Principal> => {
      await throttle?.check(given.username, address);
      try {
        const principal = this.mode === 'basic' ? await this.configuredUser(given.username, given.password) : await this.storedUser(given.username, given.password);
        this.remember(key, principal.id, principal.generation);
        return principal.principal;
      } catch (error) {
        if (error instanceof UnauthorizedError) {
          await throttle?.failed(given.username, address);
          await this.options.audit?.record('auth.login.failed', undefined, `failed Basic credentials for ${given.username}`, { username: given.username, address, method: 'basic' });
        }
        throw error;
      }
    };
    return throttle !== undefined ? throttle.serially(given.username, guess) : guess();
  }

  private configuredPrincipal(): Principal {
    const name = this.options.auth.basicUsername ?? '';
    return { kind: 'user', id: `basic:${name}`, name, role: 'admin' };
  }

  /** Mode basic: the one configured user, an admin. */
  private async configuredUser(username: string, password: string): Promise<{ principal: Principal; id: string; generation: number }> {
    const { basicUsername, basicPassword, basicPasswordHash } = this.options.auth;
    const nameOk = timingSafeEqual(digest(username), digest(basicUsername ?? ''));
    const passwordOk = basicPassword !== undefined ? timingSafeEqual(digest(password), digest(basicPassword)) : await verifyPassword(password, basicPasswordHash);
    if (!nameOk || !passwordOk) throw new UnauthorizedError(INVALID);
    const principal = this.configuredPrincipal();
    return { principal, id: principal.id, generation: 0 };
  }

  /** Builtin mode: a user's name and password, checked with bcrypt (then remembered briefly by the caller). */
  private async storedUser(username: string, password: string): Promise<{ principal: Principal; id: string; generation: number }> {
    const user = await getUserByUsername(this.options.db, username);
    const passwordOk = await verifyPassword(password, user?.passwordHash);
    if (user === undefined || !passwordOk) throw new UnauthorizedError(INVALID);
    return { principal: await this.activeUser(user.id, user.tokenGeneration), id: user.id, generation: user.tokenGeneration };
  }

  private remember(key: string, userId: string, generation: number): void {
    if (this.basicHits.size >= BASIC_CACHE_MAX) this.basicHits.clear();
    this.basicHits.set(key, { userId, generation, at: Date.now() });
  }

  /** The user a credential names, if it still exists, is enabled and the credential is of its current generation. */
  private async activeUser(userId: string, generation: number): Promise<Principal> {
    const user = await this.cachedUser(userId);
    if (user === undefined || user.isDisabled || user.tokenGeneration !== generation || !isRole(user.role)) throw new UnauthorizedError(INVALID);
    return { kind: 'user', id: user.id, name: user.username, role: user.role };
  }

  private async cachedUser(userId: string): Promise<UserRecord | undefined> {
    const cached = this.users.get(userId);
    if (cached !== undefined && Date.now() - cached.at < USER_CACHE_MS) return cached.user;
    const user = await getUserById(this.options.db, userId);
    if (this.users.size >= BASIC_CACHE_MAX) this.users.clear();
    this.users.set(userId, { user, at: Date.now() });
    return user;
  }
}
