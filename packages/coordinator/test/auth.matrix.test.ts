import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';
import { basic, bearer, callWith, mintLicense, type Answer } from './support/auth-fixtures.js';

/** The contract's role table, written out here rather than read from the code it checks. */
const CONTRACT: Record<string, Record<string, boolean>> = {
  'dags:read': { admin: true, manager: true, developer: true, operator: true, viewer: true },
  'dags:write': { admin: true, manager: true, developer: true, operator: false, viewer: false },
  'dags:run': { admin: true, manager: true, developer: true, operator: true, viewer: false },
  'audit:read': { admin: true, manager: true, developer: false, operator: false, viewer: false },
  'users:manage': { admin: true, manager: false, developer: false, operator: false, viewer: false },
  // Runtime profiles: managers manage (non-protected) profiles; the secret store's key is the admin's.
  'profiles:manage': { admin: true, manager: true, developer: false, operator: false, viewer: false },
  'secrets:manage': { admin: true, manager: false, developer: false, operator: false, viewer: false },
};

/** Rules of the contract that name routes: the permission each must declare. */
const NAMED: Record<string, string> = {
  'get /health': 'public',
  'post /auth/setup': 'public',
  'post /auth/login': 'public',
  'post /auth/change-password': 'authenticated',
  'get /event-logs': 'audit:read',
  'get /users': 'users:manage',
  'post /users': 'users:manage',
  'delete /dags/{fileName}': 'dags:write',
  'put /dags/{fileName}/spec': 'dags:write',
  'post /dags/{fileName}/start': 'dags:run',
  'post /dag-runs/{name}/{dagRunId}/stop': 'dags:run',
  'post /dag-runs/{name}/{dagRunId}/retry': 'dags:run',
  'get /dags': 'dags:read',
  'post /services/scheduler/pause': 'users:manage',
  'get /services/scheduler/pause': 'authenticated',
  'post /webhooks/{fileName}': 'webhook',
  'post /api-keys': 'users:manage',
  'post /dags/{fileName}/webhook': 'users:manage',
  // Rule 7: workspace reads need no credentials, changes developer or above.
  'get /workspaces': 'public',
  'get /workspaces/{workspaceId}': 'public',
  'post /workspaces': 'dags:write',
  'patch /workspaces/{workspaceId}': 'dags:write',
  'delete /workspaces/{workspaceId}': 'dags:write',
  // Profiles: chosen by whoever may run, managed by managers and admins.
  'get /profiles': 'dags:run',
  'get /profiles/{profileName}': 'dags:run',
  'post /profiles': 'profiles:manage',
  'patch /profiles/{profileName}': 'profiles:manage',
  'delete /profiles/{profileName}': 'profiles:manage',
  'put /profiles/{profileName}/secrets/{key}': 'profiles:manage',
  'put /profiles/_global/variables/{key}': 'profiles:manage',
  'delete /profiles/_workspaces/{workspaceName}/entries/{key}': 'profiles:manage',
  'post /secrets/rotate-key': 'secrets:manage',
  // Documents: read like DAGs; writes need write_dags and a writing role.
  'get /docs': 'dags:read',
  'get /docs/doc': 'dags:read',
  'post /docs': 'dags:write',
  'patch /docs/doc': 'dags:write',
  'delete /docs/doc': 'dags:write',
  'post /docs/doc/rename': 'dags:write',
};

const SECRET = 'matrix-test-token-secret-of-40-characters!';
const ROLES = ['admin', 'manager', 'developer', 'operator', 'viewer'] as const;
const PASSWORD = 'correct horse battery';
const PARAMS: Record<string, string> = { fileName: 'no_such_dag', name: 'no_such_dag', dagRunId: 'no-such-run', stepName: 'step', subDagRunId: 'no-such-sub', userId: 'no-such-user', queueName: 'no-such-queue', profileName: 'no-such-profile', key: 'SOME_KEY', workspaceName: 'no-such-workspace' };

let t: TestCoordinator;
const credentials: Record<string, string> = {};
let adminId = '';

function concretePath(path: string): string {
  return path.replace(/\{([A-Za-z]+)\}/g, (_, name: string) => PARAMS[name] ?? 'x');
}

async function call(method: string, path: string, authorization: string | undefined, body?: unknown): Promise<Answer> {
  return callWith(t.coordinator.apiUrl, method, path, authorization, body);
}

before(async () => {
  const { license, licensePublicKey } = mintLicense();
  // The default profile `house` exists only once the test of the default creates it: until then a start naming none answers 404.
  t = await startTestCoordinator('auth-matrix', {}, { auth: { mode: 'builtin', tokenSecret: SECRET, license, licensePublicKey }, secretsKey: randomBytes(32).toString('base64'), defaultProfile: 'house' });
  const setup = await call('POST', '/auth/setup', undefined, { username: 'admin', password: PASSWORD });
  assert.equal(setup.status, 200, JSON.stringify(setup.json));
  credentials.admin = bearer(setup.json.token as string);
  adminId = (setup.json.user as { id: string }).id;
  for (const role of ROLES.filter((r) => r !== 'admin')) {
    const made = await call('POST', '/users', credentials.admin, { username: role, password: PASSWORD, role });
    assert.equal(made.status, 201, JSON.stringify(made.json));
    // Basic for some roles, tokens for the others: both authentication paths meet the same table.
    if (role === 'operator') credentials[role] = basic(role, PASSWORD);
    else credentials[role] = bearer(((await call('POST', '/auth/login', undefined, { username: role, password: PASSWORD })).json.token as string));
  }
  const gone = await call('POST', '/users', credentials.admin, { username: 'gone', password: PASSWORD, role: 'admin' });
  const goneToken = (await call('POST', '/auth/login', undefined, { username: 'gone', password: PASSWORD })).json.token as string;
  assert.equal((await call('GET', '/auth/me', bearer(goneToken))).status, 200);
  const disabled = await call('PATCH', `/users/${(gone.json.user as { id: string }).id}`, credentials.admin, { isDisabled: true });
  assert.equal(disabled.status, 200, JSON.stringify(disabled.json));
  credentials['disabled user'] = bearer(goneToken);
  credentials['no credentials'] = '';
  credentials['bad token'] = bearer('not-a-token');
  credentials['forged token'] = bearer(jwt.sign({ gen: 0 }, 'another-secret-another-secret-another!', { algorithm: 'HS256', subject: adminId, expiresIn: 600 }));
  credentials['expired token'] = bearer(jwt.sign({ gen: 0, exp: Math.floor(Date.now() / 1000) - 60 }, SECRET, { algorithm: 'HS256', subject: adminId }));
  credentials['unknown API key'] = bearer('svc_not-a-key');
  credentials['malformed Basic'] = 'Basic !!!';
});

after(async () => {
  await t.stop();
});

type Operation = { 'x-permission'?: string; security?: unknown[] };

describe('access control matrix: every operation of the served OpenAPI document under every role and bad credential', () => {
  test('every operation declares a permission, the contract-named ones the right one, and answers as the role table says', async () => {
    const doc = await call('GET', '/openapi.json', credentials.admin);
    assert.equal(doc.status, 200);
    const paths = doc.json.paths as Record<string, Record<string, Operation>>;
    const failures: string[] = [];
    let checked = 0;
    for (const [path, operations] of Object.entries(paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const key = `${method} ${path}`;
        const permission = operation['x-permission'];
        if (permission === undefined) {
          failures.push(`${key}: no permission in the table`);
          continue;
        }
        if (NAMED[key] !== undefined && NAMED[key] !== permission) failures.push(`${key}: needs ${NAMED[key]} by the contract, declares ${permission}`);
        if (permission !== 'public' && permission !== 'authenticated' && permission !== 'webhook' && CONTRACT[permission] === undefined) failures.push(`${key}: unknown permission ${permission}`);
        const body = method === 'get' || method === 'delete' ? undefined : {};
        for (const [who, authorization] of Object.entries(credentials)) {
          const answer = await call(method.toUpperCase(), concretePath(path), authorization === '' ? undefined : authorization, body);
          checked += 1;
          const isRole = (ROLES as readonly string[]).includes(who);
          // The webhook route takes only its DAG's webhook token: a user's or key's credentials are an invalid webhook token (401 by the contract).
          const expected = permission === 'public' ? 'allowed' : !isRole || permission === 'webhook' ? 'unauthorized' : permission === 'authenticated' || CONTRACT[permission]?.[who] === true ? 'allowed' : 'forbidden';
          const details = answer.json.details as { permission?: string } | undefined;
          const got = answer.status === 401 && answer.json.code === 'unauthorized' ? 'unauthorized' : answer.status === 403 && answer.json.code === 'forbidden' && details?.permission !== undefined ? 'forbidden' : answer.status === 401 || answer.status === 403 ? `odd ${answer.status} ${JSON.stringify(answer.json)}` : 'allowed';
          if (got !== expected) failures.push(`${key} as ${who}: expected ${expected}, got ${got} (${answer.status} ${JSON.stringify(answer.json).slice(0, 200)})`);
          if (got === 'forbidden' && details?.permission !== permission) failures.push(`${key} as ${who}: 403 names ${details?.permission}`);
        }
        // The document states the requirement too: nothing for public operations, credentials for the rest.
        if ((permission === 'public') !== (operation.security?.length === 0)) failures.push(`${key}: security requirement does not match ${permission}`);
      }
    }
    assert.deepEqual(failures, []);
    assert.ok(checked > 40 * Object.keys(credentials).length, `walked ${checked} requests`);
  });

  test('protected profiles: only admins create, view, change, delete or use them; managers manage the rest; run permission uses active non-protected ones', async () => {
    assert.equal((await call('POST', '/profiles', credentials.manager, { name: 'vault', protected: true })).status, 403, 'a manager cannot create a protected profile');
    assert.equal((await call('POST', '/profiles', credentials.admin, { name: 'vault', protected: true })).status, 201);
    assert.equal((await call('POST', '/profiles', credentials.manager, { name: 'open' })).status, 201);
    assert.equal((await call('POST', '/profiles', credentials.developer, { name: 'dev' })).status, 403);
    for (const [method, path, body] of [
      ['GET', '/profiles/vault', undefined],
      ['PATCH', '/profiles/vault', { description: 'x' }],
      ['PUT', '/profiles/vault/secrets/TOKEN', { value: 'v' }],
      ['PUT', '/profiles/vault/variables/A', { value: 'v' }],
      ['DELETE', '/profiles/vault/entries/A', undefined],
      ['DELETE', '/profiles/vault', undefined],
    ] as const) {
      const denied = await call(method, path, credentials.manager, body);
      assert.deepEqual([denied.status, denied.json.code], [403, 'forbidden'], `${method} ${path}`);
    }
    assert.equal((await call('PATCH', '/profiles/open', credentials.manager, { protected: true })).status, 403, 'a manager cannot protect a profile');
    assert.equal((await call('PUT', '/profiles/open/secrets/TOKEN', credentials.manager, { value: 'v' })).status, 200);
    assert.equal((await call('PUT', '/profiles/vault/secrets/TOKEN', credentials.admin, { value: 'v' })).status, 200);
    assert.equal((await call('PUT', '/profiles/_global/variables/A', credentials.manager, { value: 'v' })).status, 200, 'managers manage the Global defaults');
    const seen = async (who: string) => ((await call('GET', '/profiles', credentials[who])).json.profiles as Array<{ name: string }>).map((p) => p.name);
    assert.deepEqual(await seen('admin'), ['open', 'vault']);
    assert.deepEqual(await seen('manager'), ['open']);
    assert.deepEqual(await seen('operator'), ['open'], 'run permission sees the profiles it may use');
    assert.equal((await call('GET', '/profiles', credentials.viewer)).status, 403);
    const principal = (who: string, role: string) => ({ kind: 'user' as const, id: who, name: who, role: role as 'admin' });
    const profiles = t.coordinator.profiles;
    assert.equal((await profiles.mayUse(principal('op', 'operator'), 'open')).name, 'open');
    await assert.rejects(profiles.mayUse(principal('op', 'operator'), 'vault'), { name: 'ForbiddenError' });
    await assert.rejects(profiles.mayUse(principal('mgr', 'manager'), 'vault'), { name: 'ForbiddenError' });
    await assert.rejects(profiles.mayUse(principal('v', 'viewer'), 'open'), { name: 'ForbiddenError' });
    assert.equal((await profiles.mayUse(principal('a', 'admin'), 'vault')).name, 'vault');
    // The same rules on a start over the API: a protected profile needs an admin, another one only the start's own permission.
    const spec = 'steps:\n  - name: s\n    command: "true"\n';
    const refused = await call('POST', '/dag-runs', credentials.developer, { spec, profileName: 'vault' });
    assert.deepEqual([refused.status, refused.json.code, refused.json.message], [403, 'forbidden', 'only admins may use protected profiles']);
    assert.equal((await call('POST', '/dag-runs', credentials.developer, { spec, profileName: 'open' })).status, 200);
    assert.equal((await call('POST', '/dag-runs', credentials.admin, { spec, profileName: 'vault' })).status, 200);
    // Rule 8: a webhook may use any profile on its allowlist, protected ones included, and nothing else.
    const hook = { kind: 'webhook' as const, id: 'wh', name: 'dag', role: 'operator' as const };
    assert.equal((await profiles.mayUse(hook, 'vault', { named: true, allowlist: ['vault'] })).name, 'vault');
    await assert.rejects(profiles.mayUse(hook, 'open', { named: true, allowlist: ['vault'] }), { name: 'ForbiddenError' });
    await assert.rejects(profiles.mayUse(hook, 'missing', { named: true, allowlist: ['missing'] }), { name: 'NotFoundError' });
    // The configured default, which the call did not name: on the allowlist, or else under the webhook's operator role.
    assert.equal((await profiles.mayUse(hook, 'open', { named: false, allowlist: [] })).name, 'open');
    await assert.rejects(profiles.mayUse(hook, 'vault', { named: false, allowlist: [] }), { name: 'ForbiddenError' });
    assert.equal((await profiles.mayUse(hook, 'vault', { named: false, allowlist: ['vault'] })).name, 'vault');
    assert.equal((await call('PATCH', '/profiles/open', credentials.manager, { status: 'disabled' })).status, 200);
    await assert.rejects(profiles.mayUse(principal('op', 'operator'), 'open'), /disabled/);
    assert.equal((await call('DELETE', '/profiles/vault', credentials.admin)).status, 204);
  });

  test('the default profile (a start naming none) is checked like a named one: protected, it needs an admin or a webhook allowlist', async () => {
    assert.equal((await call('POST', '/profiles', credentials.admin, { name: 'house', protected: true })).status, 201);
    assert.equal((await call('POST', '/profiles', credentials.manager, { name: 'lobby' })).status, 201);
    assert.equal((await call('POST', '/dags', credentials.admin, { name: 'plain', spec: 'steps:\n  - echo hi\n' })).status, 201);
    for (const who of ['operator', 'developer', 'manager']) {
      const refused = await call('POST', '/dags/plain/start', credentials[who], {});
      assert.deepEqual([refused.status, refused.json.code, refused.json.message], [403, 'forbidden', 'only admins may use protected profiles: house is the default profile of runs that name none'], who);
      assert.equal((await call('POST', '/dags/plain/enqueue', credentials[who], {})).status, 403, who);
      assert.equal((await call('POST', '/dags/plain/start-sync', credentials[who], { timeout: 5 })).status, 403, who);
      assert.equal((await call('POST', '/dags/plain/start', credentials[who], { profileName: 'lobby' })).status, 200, `${who} naming a profile it may use`);
    }
    for (const path of ['/dag-runs', '/dag-runs/enqueue']) assert.equal((await call('POST', path, credentials.developer, { spec: 'steps:\n  - echo hi\n' })).status, 403, path);
    const mine = await call('POST', '/dags/plain/start', credentials.admin, {});
    assert.equal(mine.status, 200);
    assert.equal(((await call('GET', `/dag-runs/plain/${String(mine.json.dagRunId)}`, credentials.admin)).json.dagRun as { profileName: string }).profileName, 'house');
    // A retry keeps the run's profile: the same rule.
    assert.equal((await call('POST', `/dag-runs/plain/${String(mine.json.dagRunId)}/retry`, credentials.operator, {})).status, 403);
    // Webhooks: without X-Svc-Profile the default applies, and a protected one must be on the allowlist.
    const hook = await call('POST', '/dags/plain/webhook', credentials.admin, {});
    const token = bearer(hook.json.token as string);
    const unlisted = await call('POST', '/webhooks/plain', token, {});
    assert.deepEqual([unlisted.status, unlisted.json.code], [403, 'forbidden']);
    assert.equal((await call('PUT', '/dags/plain/webhook/profiles', credentials.admin, { profileAllowlist: ['house'] })).status, 200);
    const listed = await call('POST', '/webhooks/plain', token, {});
    assert.equal(listed.status, 200, JSON.stringify(listed.json));
    assert.equal(((await call('GET', `/dag-runs/plain/${String(listed.json.dagRunId)}`, credentials.admin)).json.dagRun as { profileName: string }).profileName, 'house');
    // Not protected: run permission, and a webhook's operator role, use it.
    assert.equal((await call('PATCH', '/profiles/house', credentials.admin, { protected: false })).status, 200);
    assert.equal((await call('PUT', '/dags/plain/webhook/profiles', credentials.admin, { profileAllowlist: [] })).status, 200);
    assert.equal((await call('POST', '/dags/plain/start', credentials.operator, {})).status, 200);
    assert.equal((await call('POST', '/webhooks/plain', token, {})).status, 200);
  });

  test('the contract rules by name: event logs need manager or admin, DAG edits developer or above', async () => {
    assert.equal((await call('GET', '/event-logs', credentials.developer)).status, 403);
    assert.equal((await call('GET', '/event-logs', credentials.manager)).status, 200);
    const denied = await call('DELETE', '/dags/no_such_dag', credentials.operator);
    assert.deepEqual([denied.status, denied.json.code, denied.json.message], [403, 'forbidden', 'Permission denied to edit DAGs']);
    const missing = await call('GET', '/dags', undefined);
    assert.deepEqual([missing.status, missing.json.code], [401, 'unauthorized']);
    assert.equal((await call('GET', '/health', credentials['bad token'])).status, 200);
  });
});
