import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { loadServerConfig, type RawServerConfig } from '@trellis/coordinator';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';
import { bearer, callWith, mintLicense, type Answer } from './support/auth-fixtures.js';
import { browserLogin, freePort, startTestProvider, type TestProvider } from './support/oidc-provider.js';

const SECRET = 'oidc-test-token-secret-of-40-characters!!';
const ROLE_MAP = { admins: 'admin', ops: 'operator', devs: 'developer' } as const;

let provider: TestProvider;
/** Provisions unknown users; users in no mapped group are viewers. */
let open: TestCoordinator;
/** On the same database, provisions nobody and has no default role. */
let closed: TestCoordinator;

const callbackOf = (port: number): string => `http://127.0.0.1:${port}/api/v1/auth/oidc/callback`;

function oidcConfig(port: number, extra: Record<string, unknown>): Record<string, unknown> {
  return { issuer: provider.issuer, clientId: provider.clientId, clientSecret: provider.clientSecret, redirectUrl: callbackOf(port), scopes: ['openid', 'profile'], roleClaim: 'groups', roleMap: ROLE_MAP, ...extra };
}

async function call(t: TestCoordinator, method: string, path: string, authorization?: string, body?: unknown): Promise<Answer> {
  return callWith(t.coordinator.apiUrl, method, path, authorization, body);
}

type AuditRecord = { message: string; userId: string; data: Record<string, unknown> };

/** Audit records of a type, read through the API as an admin (alice, provisioned by the first test). */
async function auditOf(type: string): Promise<AuditRecord[]> {
  const admin = await browserLogin(open.coordinator.apiUrl, 'alice-sub');
  const page = await call(open, 'GET', `/event-logs?kind=audit&type=${type}&limit=1000`, bearer(admin.json.token as string));
  assert.equal(page.status, 200, JSON.stringify(page.json));
  return page.json.entries as AuditRecord[];
}

const userOf = (login: { json: Record<string, unknown> }): Record<string, unknown> => login.json.user as Record<string, unknown>;

before(async () => {
  const [openPort, closedPort] = [await freePort(), await freePort()];
  provider = await startTestProvider([callbackOf(openPort), callbackOf(closedPort)]);
  const { license, licensePublicKey } = mintLicense();
  const auth = { mode: 'builtin' as const, tokenSecret: SECRET, license, licensePublicKey };
  open = await startTestCoordinator('auth-oidc', {}, { port: openPort, grpcPort: -1, auth: { ...auth, oidc: oidcConfig(openPort, { autoProvision: true, defaultRole: 'viewer' }) } as RawServerConfig['auth'] });
  closed = await startTestCoordinator(
    'auth-oidc-closed',
    {},
    { port: closedPort, grpcPort: -1, coordinatorId: 'closed', auth: { ...auth, oidc: oidcConfig(closedPort, { autoProvision: false }) } as RawServerConfig['auth'] },
    { db: open.coordinator.db },
  );
  provider.accounts.set('alice-sub', { preferred_username: 'alice', groups: ['admins', 'ops'] });
  provider.accounts.set('bob-sub', { preferred_username: 'bob', groups: ['ops', 'unmapped'] });
  provider.accounts.set('carol-sub', { preferred_username: 'carol', groups: ['unmapped'] });
});

after(async () => {
  await closed?.stop();
  await open?.stop();
  await provider?.stop();
});

describe('single sign-on against a real OpenID provider (authorization code with PKCE)', () => {
  test('a first login provisions the user with the role its groups map to, and the token works like a password login', async () => {
    const login = await browserLogin(open.coordinator.apiUrl, 'alice-sub');
    assert.equal(login.status, 200, JSON.stringify(login.json));
    const user = userOf(login);
    assert.deepEqual([user.username, user.role, user.authProvider, user.isDisabled], ['alice', 'admin', 'oidc', false]);
    assert.ok(Date.parse(login.json.expiresAt as string) > Date.now());
    const me = await call(open, 'GET', '/auth/me', bearer(login.json.token as string));
    assert.equal(me.status, 200);
    assert.deepEqual(me.json.principal, { kind: 'user', id: user.id, name: 'alice', role: 'admin' });
    // The other coordinator of the database accepts the token too.
    assert.equal((await call(closed, 'GET', '/users', bearer(login.json.token as string))).status, 200);
    assert.ok((await auditOf('auth.login.succeeded')).some((e) => e.userId === user.id && e.data.provider === 'oidc' && typeof e.data.address === 'string'));
    assert.ok((await auditOf('user.created')).some((e) => e.data.targetUserId === user.id && e.data.provider === 'oidc'));
    // No password opens an account made by single sign-on.
    assert.equal((await call(open, 'POST', '/auth/login', undefined, { username: 'alice', password: '!' })).status, 401);
  });

  test('the role follows the claims at every login; unmapped groups get the default role', async () => {
    const bob = await browserLogin(open.coordinator.apiUrl, 'bob-sub');
    assert.equal(userOf(bob).role, 'operator');
    assert.equal((await call(open, 'DELETE', '/dags/anything', bearer(bob.json.token as string))).status, 403);
    provider.accounts.set('bob-sub', { preferred_username: 'bob', groups: ['devs'] });
    const again = await browserLogin(open.coordinator.apiUrl, 'bob-sub');
    assert.deepEqual([userOf(again).role, userOf(again).id], ['developer', userOf(bob).id]);
    const me = await call(open, 'GET', '/auth/me', bearer(again.json.token as string));
    assert.equal((me.json.principal as { role: string }).role, 'developer');
    const carol = await browserLogin(open.coordinator.apiUrl, 'carol-sub');
    assert.deepEqual([carol.status, userOf(carol).role], [200, 'viewer']);
  });

  test('with provisioning off only known users get in, and without a default role unmapped users are refused', async () => {
    provider.accounts.set('dave-sub', { preferred_username: 'dave', groups: ['ops'] });
    const dave = await browserLogin(closed.coordinator.apiUrl, 'dave-sub');
    assert.deepEqual([dave.status, dave.json.code], [401, 'unauthorized']);
    assert.match(dave.json.message as string, /provisioning is off/);
    const alice = await browserLogin(closed.coordinator.apiUrl, 'alice-sub');
    assert.deepEqual([alice.status, userOf(alice).username], [200, 'alice']);
    const carol = await browserLogin(closed.coordinator.apiUrl, 'carol-sub');
    assert.deepEqual([carol.status, carol.json.code], [401, 'unauthorized']);
    assert.match(carol.json.message as string, /no role/);
    const failures = await auditOf('auth.login.failed');
    assert.ok(failures.some((e) => e.data.username === 'dave' && e.data.reason === 'unknown user' && e.userId === ''));
    assert.ok(failures.some((e) => e.data.username === 'carol' && e.data.reason === 'no role'));
  });

  test('a disabled single sign-on user is refused, and its earlier token stops working', async () => {
    const admin = bearer((await browserLogin(open.coordinator.apiUrl, 'alice-sub')).json.token as string);
    provider.accounts.set('erin-sub', { preferred_username: 'erin', groups: ['ops'] });
    const erin = await browserLogin(open.coordinator.apiUrl, 'erin-sub');
    const reset = await call(open, 'POST', `/users/${String(userOf(erin).id)}/reset-password`, admin, { newPassword: 'a second way in' });
    assert.deepEqual([reset.status, reset.json.code], [400, 'bad_request'], 'a single sign-on user gets no password');
    const disabled = await call(open, 'PATCH', `/users/${String(userOf(erin).id)}`, admin, { isDisabled: true });
    assert.equal(disabled.status, 200, JSON.stringify(disabled.json));
    const refused = await browserLogin(open.coordinator.apiUrl, 'erin-sub');
    assert.deepEqual([refused.status, refused.json.code, refused.json.message], [401, 'unauthorized', 'this account is disabled']);
    assert.equal((await call(open, 'GET', '/auth/me', bearer(erin.json.token as string))).status, 401);
    assert.ok((await auditOf('auth.login.failed')).some((e) => e.data.username === 'erin' && e.data.reason === 'user disabled'));
  });

  test('an unknown or tampered state, a replayed code and a provider error are 401 with the contract body, never a 500', async () => {
    const noState = await call(open, 'GET', '/auth/oidc/callback?code=abc&state=xyz');
    assert.deepEqual([noState.status, noState.json.code], [401, 'unauthorized']);
    assert.match(noState.json.message as string, /unknown or expired/);
    const forged = await fetch(`${open.coordinator.apiUrl}/auth/oidc/callback?code=abc&state=xyz`, { headers: { cookie: 'trellis_oidc=not.a.jwt' } });
    assert.deepEqual([forged.status, ((await forged.json()) as { code: string }).code], [401, 'unauthorized']);
    const tampered = await browserLogin(open.coordinator.apiUrl, 'alice-sub', (url) => {
      url.searchParams.set('state', 'someone-elses-state');
      return url;
    });
    assert.deepEqual([tampered.status, tampered.json.code], [401, 'unauthorized']);
    const denied = await browserLogin(open.coordinator.apiUrl, 'alice-sub', (url) => {
      const error = new URL(url.href);
      error.search = '';
      error.searchParams.set('error', 'access_denied');
      error.searchParams.set('state', url.searchParams.get('state') ?? '');
      error.searchParams.set('iss', url.searchParams.get('iss') ?? '');
      return error;
    });
    assert.deepEqual([denied.status, denied.json.code], [401, 'unauthorized']);
    // A code is good once: the callback replayed without the (cleared) cookie does not log in again.
    const first = await browserLogin(open.coordinator.apiUrl, 'alice-sub');
    assert.equal(first.status, 200);
    const replay = await fetch(first.callbackUrl);
    assert.deepEqual([replay.status, ((await replay.json()) as { code: string }).code], [401, 'unauthorized']);
    assert.ok((await auditOf('auth.login.failed')).some((e) => e.data.provider === 'oidc' && String(e.data.reason).startsWith('provider')));
  });

  test('the login redirect carries PKCE (S256), state and nonce, and keeps them in an HttpOnly cookie', async () => {
    const res = await fetch(`${open.coordinator.apiUrl}/auth/oidc/login`, { redirect: 'manual' });
    assert.equal(res.status, 302);
    const to = new URL(res.headers.get('location') ?? '');
    assert.equal(to.origin, provider.issuer);
    for (const name of ['state', 'nonce', 'code_challenge']) assert.ok((to.searchParams.get(name) ?? '').length >= 32, name);
    assert.deepEqual([to.searchParams.get('code_challenge_method'), to.searchParams.get('response_type'), to.searchParams.get('client_id')], ['S256', 'code', 'trellis']);
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('trellis_oidc='));
    assert.ok(cookie !== undefined && /HttpOnly/i.test(cookie) && /SameSite=Lax/i.test(cookie) && /Path=\/api\/v1\/auth\/oidc\/callback/.test(cookie), cookie);
  });
});

describe('single sign-on settings', () => {
  test('a coordinator without auth.oidc answers the SSO routes 404, an unreachable provider 503, and the config refuses OIDC outside builtin mode or without any role', async () => {
    const plain = await startTestCoordinator('auth-oidc-off', {}, { grpcPort: -1, auth: { mode: 'builtin', tokenSecret: SECRET } });
    try {
      const login = await call(plain, 'GET', '/auth/oidc/login');
      assert.deepEqual([login.status, login.json.code], [404, 'not_found']);
    } finally {
      await plain.stop();
    }
    const deadIssuer = `http://127.0.0.1:${await freePort()}`;
    const down = await startTestCoordinator('auth-oidc-down', {}, { grpcPort: -1, auth: { mode: 'builtin', tokenSecret: SECRET, oidc: { issuer: deadIssuer, clientId: 'c', redirectUrl: 'http://127.0.0.1:1/cb', defaultRole: 'viewer' } } });
    try {
      const login = await call(down, 'GET', '/auth/oidc/login');
      assert.deepEqual([login.status, login.json.code], [503, 'service_unavailable']);
      assert.match(login.json.message as string, /identity provider cannot be reached/);
    } finally {
      await down.stop();
    }
    const base = { issuer: 'https://id.example.com', clientId: 'c', redirectUrl: 'https://trellis.example.com/api/v1/auth/oidc/callback' };
    const load = (auth: Record<string, unknown>) => () => loadServerConfig({ cwd: tmpdir(), env: {}, overrides: { auth } });
    assert.throws(load({ mode: 'basic', basicUsername: 'a', basicPassword: 'b', oidc: { ...base, defaultRole: 'viewer' } }), /auth\.oidc: single sign-on needs auth.mode builtin/);
    assert.throws(load({ mode: 'builtin', oidc: base }), /auth\.oidc\.defaultRole: set roleClaim with roleMap, or defaultRole/);
    assert.throws(load({ mode: 'builtin', oidc: { ...base, issuer: 'http://id.example.com', defaultRole: 'viewer' } }), /auth\.oidc\.issuer: must use https/);
    const loaded = load({ mode: 'builtin', oidc: { ...base, roleClaim: 'groups', roleMap: { admins: 'admin' } } })();
    assert.deepEqual([loaded.auth.oidc?.autoProvision, loaded.auth.oidc?.scopes, loaded.auth.oidc?.usernameClaim], [false, ['openid', 'profile', 'email'], 'preferred_username']);
  });
});
