import { AlreadyExistsError } from '@trellis/core';
import { isUniqueViolation } from './unique.js';
import type { Db, Queryable } from '../db/types.js';

export interface UserRecord {
  id: string;
  username: string;
  passwordHash: string;
  role: string;
  authProvider: string;
  isDisabled: boolean;
  /** Part of every login token; bumped when tokens issued before must stop working. */
  tokenGeneration: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface NewUser {
  id: string;
  username: string;
  passwordHash: string;
  role: string;
}

/** Only the given fields change. Disabling bumps the token generation. */
export interface UserChange {
  username?: string;
  role?: string;
  isDisabled?: boolean;
}

export class UsernameTakenError extends AlreadyExistsError {
  constructor(readonly username: string) {
    super(`username ${username} exists`);
  }
}

const COLUMNS = `id, username, password_hash AS "passwordHash", role, auth_provider AS "authProvider", is_disabled AS "isDisabled",
  token_generation AS "tokenGeneration", created_at AS "createdAt", updated_at AS "updatedAt"`;


export async function insertUser(q: Queryable, user: NewUser): Promise<UserRecord> {
  try {
    const [row] = await q.query<UserRecord>(`INSERT INTO users (id, username, password_hash, role) VALUES ($1, $2, $3, $4) RETURNING ${COLUMNS}`, [user.id, user.username, user.passwordHash, user.role]);
    return row as UserRecord;
  } catch (error) {
    if (isUniqueViolation(error)) throw new UsernameTakenError(user.username);
    throw error;
  }
}

/**
 * The first user, only while there is none: the table lock makes two coordinators' concurrent
 * setups one success and one refusal. Undefined when a user exists already.
 */
export async function insertFirstUser(db: Db, user: NewUser): Promise<UserRecord | undefined> {
  return db.transaction(async (tx) => {
    await tx.query('LOCK TABLE users IN SHARE ROW EXCLUSIVE MODE');
    const [existing] = await tx.query('SELECT 1 FROM users LIMIT 1');
    if (existing !== undefined) return undefined;
    return insertUser(tx, user);
  });
}

/** Whether any user exists: setup is refused before it spends a bcrypt hash. */
export async function anyUserExists(q: Queryable): Promise<boolean> {
  const [row] = await q.query('SELECT 1 FROM users LIMIT 1');
  return row !== undefined;
}

export async function getUserById(q: Queryable, id: string): Promise<UserRecord | undefined> {
  const [row] = await q.query<UserRecord>(`SELECT ${COLUMNS} FROM users WHERE id = $1`, [id]);
  return row;
}

export async function getUserByUsername(q: Queryable, username: string): Promise<UserRecord | undefined> {
  const [row] = await q.query<UserRecord>(`SELECT ${COLUMNS} FROM users WHERE username = $1`, [username]);
  return row;
}

/** A single sign-on user by the provider's `issuer` and `sub` (see `oidcIdentity`). */
export async function getUserByOidcIdentity(q: Queryable, identity: string): Promise<UserRecord | undefined> {
  const [row] = await q.query<UserRecord>(`SELECT ${COLUMNS} FROM users WHERE oidc_identity = $1`, [identity]);
  return row;
}

/** A single sign-on user: no password (the stored hash matches none), found again by its identity. */
export async function insertOidcUser(q: Queryable, user: Omit<NewUser, 'passwordHash'> & { identity: string }): Promise<UserRecord> {
  try {
    const [row] = await q.query<UserRecord>(
      `INSERT INTO users (id, username, password_hash, role, auth_provider, oidc_identity) VALUES ($1, $2, '!', $3, 'oidc', $4) RETURNING ${COLUMNS}`,
      [user.id, user.username, user.role, user.identity],
    );
    return row as UserRecord;
  } catch (error) {
    if (isUniqueViolation(error)) throw new UsernameTakenError(user.username);
    throw error;
  }
}

export async function listUsers(q: Queryable): Promise<UserRecord[]> {
  return q.query<UserRecord>(`SELECT ${COLUMNS} FROM users ORDER BY username`);
}

export async function updateUser(q: Queryable, id: string, change: UserChange): Promise<UserRecord | undefined> {
  try {
    const [row] = await q.query<UserRecord>(
      `UPDATE users SET username = COALESCE($2, username), role = COALESCE($3, role), is_disabled = COALESCE($4, is_disabled),
         token_generation = token_generation + CASE WHEN $4::boolean AND NOT is_disabled THEN 1 ELSE 0 END, updated_at = now()
       WHERE id = $1 RETURNING ${COLUMNS}`,
      [id, change.username ?? null, change.role ?? null, change.isDisabled ?? null],
    );
    return row;
  } catch (error) {
    if (isUniqueViolation(error) && change.username !== undefined) throw new UsernameTakenError(change.username);
    throw error;
  }
}

/** A new password ends every token issued before it. */
export async function setUserPassword(q: Queryable, id: string, passwordHash: string): Promise<UserRecord | undefined> {
  const [row] = await q.query<UserRecord>(
    `UPDATE users SET password_hash = $2, token_generation = token_generation + 1, updated_at = now() WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, passwordHash],
  );
  return row;
}

export async function deleteUser(q: Queryable, id: string): Promise<boolean> {
  const rows = await q.query('DELETE FROM users WHERE id = $1 RETURNING id', [id]);
  return rows.length > 0;
}
