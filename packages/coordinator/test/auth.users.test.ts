import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';
import { basic, bearer, callWith, mintLicense } from './support/auth-fixtures.js';

const PASSWORD = 'first admin password';
let one: TestCoordinator;
let two: TestCoordinator;
let admin = '';
let adminId = '';

const on = (t: TestCoordinator) => (method: string, path: string, authorization?: string, body?: unknown) => callWith(t.coordinator.apiUrl, method, path, authorization, body);

before(async () => {
  const { license, licensePublicKey } = mintLicense();
  const auth = { mode: 'builtin' as const, license, licensePublicKey, tokenTtlSec: 3600 };
  one = await startTestCoordinator('auth-users', {}, { auth });
  // A second coordinator on the same database: no key configured, so both use the one kept there.
  two = await startTestCoordinator('auth-users-2', {}, { auth, coordinatorId: 'second' }, { db: one.coordinator.db });
});

after(async () => {
  await two.stop();
  await one.stop();
});

describe('built-in users', () => {
  test('setup creates the first admin once, with a token the other coordinator accepts', async () => {
    const weak = await on(one)('POST', '/auth/setup', undefined, { username: 'admin', password: 'short' });
    assert.deepEqual([weak.status, weak.json.code], [400, 'bad_request']);
    const before = Date.now();
    const setup = await on(one)('POST', '/auth/setup', undefined, { username: 'admin', password: PASSWORD });
    assert.equal(setup.status, 200, JSON.stringify(setup.json));
    const user = setup.json.user as Record<string, unknown>;
    assert.equal(user.role, 'admin');
    assert.equal(user.authProvider, 'builtin');
    assert.equal(user.isDisabled, false);
    assert.equal('passwordHash' in user, false);
    const expiresAt = Date.parse(setup.json.expiresAt as string);
    assert.ok(expiresAt >= before + 3590_000 && expiresAt <= Date.now() + 3600_000, `expiresAt ${String(setup.json.expiresAt)} is an hour away`);
    admin = bearer(setup.json.token as string);
    adminId = user.id as string;
    const again = await on(two)('POST', '/auth/setup', undefined, { username: 'other', password: PASSWORD });
    assert.deepEqual([again.status, again.json.code], [403, 'forbidden']);
    const me = await on(two)('GET', '/auth/me', admin);
    assert.equal(me.status, 200);
    assert.deepEqual(me.json.principal, { kind: 'user', id: adminId, name: 'admin', role: 'admin' });
  });

  test('login: a token and expiry; wrong password, unknown user and disabled user are one 401', async () => {
    const ok = await on(two)('POST', '/auth/login', undefined, { username: 'admin', password: PASSWORD });
    assert.equal(ok.status, 200);
    assert.equal(typeof ok.json.token, 'string');
    assert.equal(typeof ok.json.expiresAt, 'string');
    const wrong = await on(one)('POST', '/auth/login', undefined, { username: 'admin', password: 'not the password' });
    const unknown = await on(one)('POST', '/auth/login', undefined, { username: 'nobody', password: 'not the password' });
    assert.deepEqual([wrong.status, wrong.json.code, wrong.json.message], [401, 'unauthorized', 'invalid username or password']);
    assert.deepEqual([unknown.status, unknown.json.message], [401, wrong.json.message]);
    assert.equal((await on(one)('GET', '/dags', basic('admin', PASSWORD))).status, 200, 'Basic works in builtin mode');
  });

  test('user management: create, conflicts, validation, update, self-protection, reset, delete', async () => {
    const made = await on(one)('POST', '/users', admin, { username: 'dev', password: 'developer pass', role: 'developer' });
    assert.equal(made.status, 201, JSON.stringify(made.json));
    const dev = made.json.user as { id: string };
    assert.equal((await on(one)('POST', '/users', admin, { username: 'dev', password: 'developer pass', role: 'viewer' })).status, 409);
    assert.equal((await on(one)('POST', '/users', admin, { username: 'x', password: 'developer pass', role: 'root' })).status, 400);
    assert.equal((await on(one)('POST', '/users', admin, { username: 'x', password: 'seven77', role: 'viewer' })).status, 400);
    assert.equal((await on(one)('POST', '/users', admin, { username: 'a'.repeat(65), password: 'developer pass', role: 'viewer' })).status, 400);
    assert.equal((await on(one)('POST', '/users', admin, { username: '', password: 'developer pass', role: 'viewer' })).status, 400);
    assert.equal((await on(one)('POST', '/users', admin, { username: 'a'.repeat(64), password: 'developer pass', role: 'viewer' })).status, 201);
    const list = await on(two)('GET', '/users', admin);
    assert.deepEqual((list.json.users as Array<{ username: string }>).map((u) => u.username).sort(), ['a'.repeat(64), 'admin', 'dev']);
    assert.equal((await on(one)('GET', `/users/${dev.id}`, admin)).status, 200);
    assert.equal((await on(one)('GET', '/users/nope', admin)).status, 404);
    const renamed = await on(one)('PATCH', `/users/${dev.id}`, admin, { role: 'operator' });
    assert.deepEqual([renamed.status, renamed.json.role, renamed.json.username], [200, 'operator', 'dev']);
    assert.equal((await on(one)('PATCH', `/users/${dev.id}`, admin, { username: 'admin' })).status, 409);
    const selfDisable = await on(one)('PATCH', `/users/${adminId}`, admin, { isDisabled: true });
    assert.deepEqual([selfDisable.status, selfDisable.json.code], [403, 'forbidden']);
    const selfDelete = await on(one)('DELETE', `/users/${adminId}`, admin);
    assert.deepEqual([selfDelete.status, selfDelete.json.code], [403, 'forbidden']);
    const devToken = bearer((await on(one)('POST', '/auth/login', undefined, { username: 'dev', password: 'developer pass' })).json.token as string);
    assert.equal((await on(two)('GET', '/dags', devToken)).status, 200);
    const reset = await on(one)('POST', `/users/${dev.id}/reset-password`, admin, { newPassword: 'a new dev pass' });
    assert.equal(reset.status, 200);
    assert.equal((await on(one)('GET', '/dags', devToken)).status, 401, 'a reset ends earlier tokens at once here');
    assert.equal((await on(one)('POST', '/auth/login', undefined, { username: 'dev', password: 'a new dev pass' })).status, 200);
    assert.equal((await on(one)('DELETE', `/users/${dev.id}`, admin)).status, 204);
    assert.equal((await on(one)('DELETE', `/users/${dev.id}`, admin)).status, 404);
  });

  test("a disabled user's token is refused by both coordinators within 1 s, and it cannot log in", async () => {
    const made = await on(one)('POST', '/users', admin, { username: 'temp', password: 'temporary pass', role: 'viewer' });
    const id = (made.json.user as { id: string }).id;
    const token = bearer((await on(one)('POST', '/auth/login', undefined, { username: 'temp', password: 'temporary pass' })).json.token as string);
    assert.equal((await on(two)('GET', '/dags', token)).status, 200);
    assert.equal((await on(one)('PATCH', `/users/${id}`, admin, { isDisabled: true })).status, 200);
    const disabledAt = Date.now();
    assert.equal((await on(one)('GET', '/dags', token)).status, 401);
    let refusedAt: number | undefined;
    while (refusedAt === undefined && Date.now() - disabledAt < 3000) {
      if ((await on(two)('GET', '/dags', token)).status === 401) refusedAt = Date.now();
      else await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(refusedAt !== undefined && refusedAt - disabledAt <= 1000, `refused by the other coordinator after ${refusedAt === undefined ? 'never' : refusedAt - disabledAt} ms`);
    assert.equal((await on(two)('POST', '/auth/login', undefined, { username: 'temp', password: 'temporary pass' })).status, 401);
    // Enabling again does not revive the old token.
    assert.equal((await on(one)('PATCH', `/users/${id}`, admin, { isDisabled: false })).status, 200);
    assert.equal((await on(one)('GET', '/dags', token)).status, 401);
  });

  test('change-password: wrong current is 401, short new is 400; earlier tokens stop working and a fresh one is returned', async () => {
    const session = await on(one)('POST', '/auth/login', undefined, { username: 'admin', password: PASSWORD });
    const old = bearer(session.json.token as string);
    const wrong = await on(one)('POST', '/auth/change-password', old, { currentPassword: 'not it at all', newPassword: 'another long one' });
    assert.deepEqual([wrong.status, wrong.json.code], [401, 'unauthorized']);
    assert.equal((await on(one)('POST', '/auth/change-password', old, { currentPassword: PASSWORD, newPassword: 'short' })).status, 400);
    const changed = await on(one)('POST', '/auth/change-password', old, { currentPassword: PASSWORD, newPassword: 'another long one' });
    assert.equal(changed.status, 200);
    assert.equal((await on(one)('GET', '/dags', old)).status, 401);
    assert.equal((await on(one)('GET', '/dags', admin)).status, 401, 'the setup token is older still');
    admin = bearer(changed.json.token as string);
    assert.equal((await on(two)('GET', '/dags', admin)).status, 200);
    assert.equal((await on(one)('POST', '/auth/login', undefined, { username: 'admin', password: PASSWORD })).status, 401);
  });

  test('audit events name who did what, never a password or token', async () => {
    const events = await on(one)('GET', '/event-logs?kind=audit&limit=100', admin);
    assert.equal(events.status, 200);
    const entries = events.json.entries as Array<{ type: string; userId: string; data: Record<string, unknown> }>;
    const types = new Set(entries.map((e) => e.type));
    for (const type of ['auth.setup', 'auth.login.succeeded', 'auth.login.failed', 'user.created', 'user.updated', 'user.deleted', 'user.password.reset', 'user.password.changed']) assert.ok(types.has(type), `an ${type} event`);
    const failed = entries.find((e) => e.type === 'auth.login.failed');
    assert.equal(typeof failed?.data.address, 'string');
    const created = entries.find((e) => e.type === 'user.created');
    assert.equal(created?.userId, adminId);
    const text = JSON.stringify(entries);
    for (const secret of [PASSWORD, 'developer pass', 'a new dev pass', 'another long one', admin.slice(7)]) assert.equal(text.includes(secret), false, 'no secret in the audit trail');
  });
});
