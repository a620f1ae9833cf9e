import { randomUUID } from 'node:crypto';
import {
  anyUserExists, deleteUser, getUserById, getUserByUsername, insertFirstUser, insertUser, listUsers, setUserPassword, updateUser, UsernameTakenError,
  type Db, type UserChange, type UserRecord,
} from '@trellis/store';
import type { AuditTrail } from './audit.js';
import type { Authenticator } from './authenticator.js';
import type { LicenseGate } from './license.js';
import type { LoginThrottle } from './login-throttle.js';
import type { IssuedToken, LoginTokens } from './login-tokens.js';
import { checkPasswordStrength, hashPassword, verifyPassword } from './passwords.js';
import type { Principal, Role } from './principal.js';
import { AlreadyExistsError, BadRequestError, ForbiddenError, NotFoundError, UnauthorizedError } from '@trellis/core';

/** A user as the API shows it: never the password hash or the token generation. */
export interface UserView {
  id: string;
  username: string;
  role: Role;
  authProvider: 'builtin' | 'oidc';
  isDisabled: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface Credentials {
  username: string;
  password: string;
}

export interface SessionView extends IssuedToken {
  user: UserView;
}

export interface UserServiceDeps {
  db: Db;
  authenticator: Authenticator;
  /** Builtin mode only. */
  tokens: LoginTokens | undefined;
  license: LicenseGate;
  throttle: LoginThrottle;
  audit: AuditTrail;
}

const INVALID_LOGIN = 'invalid username or password';

export function userView(user: UserRecord): UserView {
  return {
    id: user.id,
    username: user.username,
    role: user.role as Role,
    authProvider: user.authProvider as UserView['authProvider'],
    isDisabled: user.isDisabled,
    createdAt: user.createdAt.toISOString(),
    updatedAt: user.updatedAt.toISOString(),
  };
}

/** Built-in users: first setup, login, passwords and the admin's user management. */
const SETUP_DONE = 'setup is done: a user exists already';

export class UserService {
  constructor(private readonly deps: UserServiceDeps) {}

  /** The first admin; 403 once any user exists. */
  async setup(input: Credentials, address: string): Promise<SessionView> {
    const tokens = this.builtinTokens();
    checkPasswordStrength(input.password);
    // Cheap refusal first: after setup, every call would otherwise cost a bcrypt hash.
    if (await anyUserExists(this.deps.db)) throw new ForbiddenError(SETUP_DONE);
    const user = await insertFirstUser(this.deps.db, { id: randomUUID(), username: input.username, passwordHash: await hashPassword(input.password), role: 'admin' });
    if (user === undefined) throw new ForbiddenError(SETUP_DONE);
    await this.deps.audit.record('auth.setup', principalOf(user), `first admin ${user.username} created`, { address });
    return { ...tokens.issue({ userId: user.id, generation: user.tokenGeneration }), user: userView(user) };
  }

  async login(input: Credentials, address: string): Promise<SessionView> {
    return this.deps.throttle.serially(input.username, () => this.checkedLogin(input, address));
  }

  private async checkedLogin(input: Credentials, address: string): Promise<SessionView> {
    const tokens = this.builtinTokens();
    await this.deps.throttle.check(input.username, address);
    const user = await getUserByUsername(this.deps.db, input.username);
    const passwordOk = await verifyPassword(input.password, user?.passwordHash);
    if (user === undefined || !passwordOk || user.isDisabled) {
      await this.deps.throttle.failed(input.username, address);
      const reason = user === undefined ? 'unknown user' : passwordOk ? 'user disabled' : 'wrong password';
      await this.deps.audit.record('auth.login.failed', undefined, `failed login for ${input.username}`, { username: input.username, address, reason });
      throw new UnauthorizedError(INVALID_LOGIN);
    }
    await this.deps.throttle.succeeded(input.username);
    await this.deps.audit.record('auth.login.succeeded', principalOf(user), `${user.username} logged in`, { address });
    return { ...tokens.issue({ userId: user.id, generation: user.tokenGeneration }), user: userView(user) };
  }

  /** The caller's own password; every earlier token stops working, so a fresh one is returned. */
  async changePassword(actor: Principal, currentPassword: string, newPassword: string): Promise<SessionView> {
    const tokens = this.builtinTokens();
    const user = actor.kind === 'user' ? await getUserById(this.deps.db, actor.id) : undefined;
    if (user === undefined) throw new BadRequestError('only a built-in user has a password to change');
    if (!(await verifyPassword(currentPassword, user.passwordHash))) throw new UnauthorizedError('the current password is wrong');
    checkPasswordStrength(newPassword);
    const changed = await setUserPassword(this.deps.db, user.id, await hashPassword(newPassword));
    if (changed === undefined) throw new NotFoundError('user not found');
    this.deps.authenticator.forget(user.id);
    await this.deps.audit.record('user.password.changed', actor, `${user.username} changed their password`);
    return { ...tokens.issue({ userId: changed.id, generation: changed.tokenGeneration }), user: userView(changed) };
  }

  /** The caller, and its stored user when it is a built-in one. */
  async me(actor: Principal): Promise<{ principal: Principal; user?: UserView }> {
    const user = actor.kind === 'user' && this.deps.authenticator.mode === 'builtin' ? await getUserById(this.deps.db, actor.id) : undefined;
    return { principal: actor, ...(user !== undefined ? { user: userView(user) } : {}) };
  }

  async list(): Promise<UserView[]> {
    this.builtinTokens();
    return (await listUsers(this.deps.db)).map(userView);
  }

  async get(id: string): Promise<UserView> {
    this.builtinTokens();
    return userView(await this.existing(id));
  }

  async create(actor: Principal, input: Credentials & { role: Role }): Promise<UserView> {
    this.builtinTokens();
    await this.deps.license.requirePro();
    checkPasswordStrength(input.password);
    const user = await this.unique(input.username, async () => insertUser(this.deps.db, { id: randomUUID(), username: input.username, passwordHash: await hashPassword(input.password), role: input.role }));
    await this.deps.audit.record('user.created', actor, `user ${user.username} created`, { targetUserId: user.id, username: user.username, role: user.role });
    return userView(user);
  }

  async update(actor: Principal, id: string, change: UserChange): Promise<UserView> {
    this.builtinTokens();
    await this.deps.license.requirePro();
    if (id === actor.id && change.isDisabled === true) throw new ForbiddenError('you cannot disable your own account');
    const user = await this.unique(change.username ?? '', () => updateUser(this.deps.db, id, change));
    if (user === undefined) throw new NotFoundError('user not found');
    this.deps.authenticator.forget(id);
    await this.deps.audit.record('user.updated', actor, `user ${user.username} updated`, { targetUserId: id, changed: Object.keys(change), ...change });
    return userView(user);
  }

  async remove(actor: Principal, id: string): Promise<void> {
    this.builtinTokens();
    await this.deps.license.requirePro();
    if (id === actor.id) throw new ForbiddenError('you cannot delete your own account');
    const user = await this.existing(id);
    if (!(await deleteUser(this.deps.db, id))) throw new NotFoundError('user not found');
    this.deps.authenticator.forget(id);
    await this.deps.audit.record('user.deleted', actor, `user ${user.username} deleted`, { targetUserId: id, username: user.username });
  }

  /** An admin sets someone's password (not Pro-gated); the user's earlier tokens stop working. */
  async resetPassword(actor: Principal, id: string, newPassword: string): Promise<UserView> {
    this.builtinTokens();
    checkPasswordStrength(newPassword);
    const target = await getUserById(this.deps.db, id);
    if (target === undefined) throw new NotFoundError('user not found');
    // A single sign-on user proves who they are at the provider: a password here would be a second way in.
    if (target.authProvider !== 'builtin') throw new BadRequestError(`${target.username} signs on through ${target.authProvider}: it has no password to reset`);
    const user = await setUserPassword(this.deps.db, id, await hashPassword(newPassword));
    if (user === undefined) throw new NotFoundError('user not found');
    this.deps.authenticator.forget(id);
    await this.deps.audit.record('user.password.reset', actor, `password of ${user.username} reset`, { targetUserId: id });
    return userView(user);
  }

  private builtinTokens(): LoginTokens {
    if (this.deps.tokens === undefined) throw new BadRequestError(`users exist only with auth.mode builtin (this server runs auth.mode ${this.deps.authenticator.mode})`);
    return this.deps.tokens;
  }

  private async existing(id: string): Promise<UserRecord> {
    const user = await getUserById(this.deps.db, id);
    if (user === undefined) throw new NotFoundError('user not found');
    return user;
  }

  private async unique<T>(username: string, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (error instanceof UsernameTakenError) throw new AlreadyExistsError(`username ${username} exists`);
      throw error;
    }
  }
}

function principalOf(user: UserRecord): Principal {
  return { kind: 'user', id: user.id, name: user.username, role: user.role as Role };
}
