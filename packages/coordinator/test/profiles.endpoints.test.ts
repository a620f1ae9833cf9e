// Workspaces and runtime profiles over real HTTP on PGlite or PostgreSQL: every endpoint of the
// contract's tables, the name and key rules, defaults layers, the workspace filter of /dags and
// /dag-runs, and what a run start will ask (mayUse, resolve).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';

type Json = Record<string, unknown>;
let t: TestCoordinator;
const KEY = randomBytes(32).toString('base64');

before(async () => {
  t = await startTestCoordinator('profiles_endpoints', {
    billing: 'labels: [workspace=finance]\nsteps:\n  - echo hi\n',
    other: 'steps:\n  - echo hi\n',
  }, { secretsKey: KEY });
});
after(async () => t.stop());

describe('workspaces', () => {
  test('create, list, get, rename, delete; 409 on a duplicate name; Name is required; 404 for unknown ids', async () => {
    assert.deepEqual((await t.call('GET', '/workspaces')).json, { workspaces: [] });
    const made = await t.call('POST', '/workspaces', { name: 'finance', description: 'money' });
    assert.equal(made.status, 201, JSON.stringify(made.json));
    assert.match(String(made.json.id), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.deepEqual([made.json.name, made.json.description], ['finance', 'money']);
    const dup = await t.call('POST', '/workspaces', { name: 'finance' });
    assert.deepEqual([dup.status, dup.json.code], [409, 'already_exists']);
    for (const body of [{}, { name: '' }, { name: '   ' }]) {
      const bad = await t.call('POST', '/workspaces', body);
      assert.equal(bad.status, 400);
      assert.match(String(bad.json.message), /Name is required/);
    }
    const id = String(made.json.id);
    assert.deepEqual((await t.call('GET', `/workspaces/${id}`)).json, made.json);
    const other = await t.call('POST', '/workspaces', { name: 'ops' });
    const renamedEmpty = await t.call('PATCH', `/workspaces/${id}`, { name: '', description: 'cash' });
    assert.deepEqual([renamedEmpty.status, renamedEmpty.json.name, renamedEmpty.json.description], [200, 'finance', 'cash']);
    assert.equal((await t.call('PATCH', `/workspaces/${id}`, { name: 'ops' })).status, 409);
    const list = await t.call('GET', '/workspaces');
    assert.deepEqual((list.json.workspaces as Json[]).map((w) => w.name), ['finance', 'ops']);
    for (const missing of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      assert.equal((await t.call('GET', `/workspaces/${missing}`)).status, 404);
      assert.equal((await t.call('PATCH', `/workspaces/${missing}`, { description: 'x' })).status, 404);
      assert.equal((await t.call('DELETE', `/workspaces/${missing}`)).status, 404);
    }
    assert.equal((await t.call('DELETE', `/workspaces/${String(other.json.id)}`)).status, 204);
    assert.equal((await t.call('GET', `/workspaces/${String(other.json.id)}`)).status, 404);
  });

  test('GET /dags and GET /dag-runs filter by workspace (the label workspace=<name>)', async () => {
    const dags = await t.call('GET', '/dags?workspace=finance');
    assert.deepEqual((dags.json.dags as Json[]).map((d) => d.fileName), ['billing']);
    assert.deepEqual(((await t.call('GET', '/dags?workspace=nowhere')).json.dags as Json[]).length, 0);
    for (const name of ['billing', 'other']) assert.equal((await t.call('POST', `/dags/${name}/enqueue`, {})).status, 200);
    const runs = await t.call('GET', '/dag-runs?workspace=finance');
    assert.deepEqual((runs.json.dagRuns as Json[]).map((r) => r.name), ['billing']);
  });

  test('workspace names are lowercase slugs wherever one is given: 400 saying the rule', async () => {
    const rule = /a workspace name is a lowercase slug/;
    for (const name of ['a,b', 'a/b', 'a=b', 'a b', 'Finance', '-x', '.x', 'ünï', 'x'.repeat(101)]) {
      const bad = await t.call('POST', '/workspaces', { name });
      assert.deepEqual([bad.status, bad.json.code], [400, 'bad_request'], name);
      assert.match(String(bad.json.message), name.length > 100 ? /at most 100 characters/ : rule, name);
    }
    const made = await t.call('POST', '/workspaces', { name: ' eu-west.1_b ' });
    assert.deepEqual([made.status, made.json.name], [201, 'eu-west.1_b'], 'surrounding spaces are trimmed');
    const id = String(made.json.id);
    const renamed = await t.call('PATCH', `/workspaces/${id}`, { name: 'a,b' });
    assert.deepEqual([renamed.status, renamed.json.code], [400, 'bad_request']);
    assert.match(String(renamed.json.message), rule);
    assert.equal((await t.call('PATCH', `/workspaces/${id}`, { name: '', description: 'kept' })).status, 200, 'an empty name is still ignored');
    // The filters and the defaults layer's path take the same rule: a `,` would split the label filter, a `/` the path.
    for (const path of ['/dags?workspace=a%2Cb', '/dag-runs?workspace=a%2Cb', '/dags?workspace=Finance', '/profiles/_workspaces/a%2Fb', '/profiles/_workspaces/a%2Cb/variables/A']) {
      const bad = await t.call(path.includes('/variables/') ? 'PUT' : 'GET', path, path.includes('/variables/') ? { value: '1' } : undefined);
      assert.deepEqual([bad.status, bad.json.code], [400, 'bad_request'], path);
      assert.match(String(bad.json.message), rule, path);
    }
    assert.equal((await t.call('GET', '/profiles/_workspaces/eu-west.1_b')).status, 200);
    assert.equal((await t.call('DELETE', `/workspaces/${id}`)).status, 204);
  });
});

describe('runtime profiles', () => {
  test('create, get, list, patch status/description/protected, delete; 409, 404, name rules', async () => {
    const made = await t.call('POST', '/profiles', { name: 'staging', description: 'pre-prod' });
    assert.equal(made.status, 201, JSON.stringify(made.json));
    assert.deepEqual([made.json.name, made.json.description, made.json.status, made.json.protected, made.json.entries], ['staging', 'pre-prod', 'active', false, []]);
    assert.equal((await t.call('POST', '/profiles', { name: 'staging' })).status, 409);
    for (const name of ['Staging', '-x', '.x', 'a b', 'ünï', '_global', 'x'.repeat(129)]) assert.equal((await t.call('POST', '/profiles', { name })).status, 400, name);
    for (const name of ['a', '0prod', 'eu-west.1_b']) assert.equal((await t.call('POST', '/profiles', { name })).status, 201, name);
    const missingName = await t.call('POST', '/profiles', {});
    assert.deepEqual([missingName.status, missingName.json.code], [400, 'bad_request']);
    const patched = await t.call('PATCH', '/profiles/staging', { status: 'disabled', description: 'off', protected: true });
    assert.deepEqual([patched.status, patched.json.status, patched.json.description, patched.json.protected], [200, 'disabled', 'off', true]);
    assert.equal((await t.call('PATCH', '/profiles/staging', { status: 'paused' })).status, 400);
    assert.equal((await t.call('PATCH', '/profiles/nope', { status: 'active' })).status, 404);
    assert.equal((await t.call('GET', '/profiles/nope')).status, 404);
    const listed = await t.call('GET', '/profiles');
    assert.deepEqual((listed.json.profiles as Json[]).map((p) => p.name), ['0prod', 'a', 'eu-west.1_b', 'staging']);
    assert.equal((await t.call('DELETE', '/profiles/a')).status, 204);
    assert.equal((await t.call('DELETE', '/profiles/a')).status, 404);
  });

  test('entries: variables show their value, secrets only key, kind and secret id; key rules; SVC_ reserved; delete entry', async () => {
    await t.call('POST', '/profiles', { name: 'prod' });
    const variable = await t.call('PUT', '/profiles/prod/variables/REGION', { value: 'eu' });
    assert.equal(variable.status, 200, JSON.stringify(variable.json));
    assert.deepEqual([variable.json.key, variable.json.kind, variable.json.value], ['REGION', 'variable', 'eu']);
    const secret = await t.call('PUT', '/profiles/prod/secrets/DB_PASSWORD', { value: 'hunter2-marker' });
    assert.equal(secret.status, 200, JSON.stringify(secret.json));
    assert.deepEqual([secret.json.key, secret.json.kind, secret.json.value], ['DB_PASSWORD', 'secret', undefined]);
    assert.match(String(secret.json.secretId), /^[0-9a-f-]{36}$/);
    const again = await t.call('PUT', '/profiles/prod/secrets/DB_PASSWORD', { value: 'rotated-marker' });
    assert.equal(again.json.secretId, secret.json.secretId, 'rotating a secret keeps its id');
    const read = await t.call('GET', '/profiles/prod');
    assert.deepEqual((read.json.entries as Json[]).map((e) => [e.key, e.kind, e.value]), [['DB_PASSWORD', 'secret', undefined], ['REGION', 'variable', 'eu']]);
    for (const answer of [read, await t.call('GET', '/profiles'), await t.call('GET', '/event-logs?kind=audit&limit=500')]) {
      assert.ok(!JSON.stringify(answer.json).includes('marker'), 'no secret value in any answer or audit record');
    }
    for (const key of ['SVC_TOKEN', '1ABC', 'A-B', 'É']) {
      const bad = await t.call('PUT', `/profiles/prod/variables/${encodeURIComponent(key)}`, { value: 'x' });
      assert.deepEqual([bad.status, bad.json.code], [400, 'bad_request'], key);
    }
    assert.match(String((await t.call('PUT', '/profiles/prod/secrets/SVC_X', { value: 'x' })).json.message), /reserved/);
    assert.equal((await t.call('PUT', '/profiles/prod/variables/_ok_1', { value: '' })).status, 200);
    assert.equal((await t.call('PUT', '/profiles/prod/variables/X', {})).status, 400);
    assert.equal((await t.call('PUT', '/profiles/nope/variables/X', { value: 'v' })).status, 404);
    // A variable replacing a secret takes its sealed value with it.
    assert.equal((await t.call('PUT', '/profiles/prod/variables/DB_PASSWORD', { value: 'plain' })).status, 200);
    assert.deepEqual(await t.coordinator.db.query('SELECT id FROM profile_secrets WHERE id::text = $1', [secret.json.secretId]), []);
    assert.equal((await t.call('DELETE', '/profiles/prod/entries/DB_PASSWORD')).status, 204);
    assert.equal((await t.call('DELETE', '/profiles/prod/entries/DB_PASSWORD')).status, 404);
  });

  test('concurrent first sets of one secret leave one sealed value, the one its entry points at', async () => {
    await t.call('POST', '/profiles', { name: 'race' });
    const answers = await Promise.all([1, 2, 3, 4, 5].map((n) => t.call('PUT', '/profiles/race/secrets/TOKEN', { value: `v${n}` })));
    assert.ok(answers.every((a) => a.status === 200), JSON.stringify(answers.map((a) => a.json)));
    const rows = await t.coordinator.db.query<{ linked: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM profile_entries e WHERE e.secret_id = s.id) AS linked FROM profile_secrets s JOIN profiles p ON p.id = s.profile_id WHERE p.name = 'race'`,
    );
    assert.deepEqual(rows, [{ linked: true }]);
  });

  test('Global and workspace defaults layers: read empty, set, describe, delete; unknown workspace 404; rename follows', async () => {
    const empty = await t.call('GET', '/profiles/_global');
    assert.deepEqual([empty.status, empty.json.name, empty.json.entries], [200, '_global', []]);
    assert.equal((await t.call('PUT', '/profiles/_global/variables/LOG_LEVEL', { value: 'info' })).status, 200);
    assert.equal((await t.call('PUT', '/profiles/_global/secrets/API_TOKEN', { value: 'global-marker' })).status, 200);
    assert.equal((await t.call('PATCH', '/profiles/_global', { description: 'everyone' })).json.description, 'everyone');
    assert.equal((await t.call('PATCH', '/profiles/_global', { status: 'disabled' })).status, 400);
    assert.equal((await t.call('DELETE', '/profiles/_global/entries/LOG_LEVEL')).status, 204);
    assert.deepEqual(((await t.call('GET', '/profiles/_global')).json.entries as Json[]).map((e) => e.key), ['API_TOKEN']);

    assert.equal((await t.call('GET', '/profiles/_workspaces/nowhere')).status, 404);
    assert.equal((await t.call('PUT', '/profiles/_workspaces/nowhere/variables/A', { value: '1' })).status, 404);
    const ws = await t.call('POST', '/workspaces', { name: 'research' });
    assert.equal((await t.call('PUT', '/profiles/_workspaces/research/variables/REGION', { value: 'us' })).status, 200);
    assert.equal((await t.call('PUT', '/profiles/_workspaces/research/secrets/API_TOKEN', { value: 'ws-marker' })).status, 200);
    assert.equal((await t.call('PATCH', '/profiles/_workspaces/research', { description: 'lab' })).status, 200);
    await t.call('PATCH', `/workspaces/${String(ws.json.id)}`, { name: 'lab' });
    const layer = await t.call('GET', '/profiles/_workspaces/lab');
    assert.deepEqual([layer.json.name, layer.json.workspace, layer.json.description, (layer.json.entries as Json[]).length], ['_workspaces/lab', 'lab', 'lab', 2]);
    assert.equal((await t.call('DELETE', '/profiles/_workspaces/lab/entries/REGION')).status, 204);

    // What a run start asks: later layers win per key, secrets opened, in memory only.
    await t.call('POST', '/profiles', { name: 'blue' });
    await t.call('PUT', '/profiles/blue/variables/REGION', { value: 'ap' });
    const resolved = await t.coordinator.profiles.resolve({ workspaceName: 'lab', profileName: 'blue' });
    assert.deepEqual(resolved.entries, [
      { key: 'API_TOKEN', kind: 'secret', layer: 'workspace', value: 'ws-marker' },
      { key: 'REGION', kind: 'variable', layer: 'profile', value: 'ap' },
    ]);
    assert.deepEqual((await t.coordinator.profiles.resolve({})).entries, [{ key: 'API_TOKEN', kind: 'secret', layer: 'global', value: 'global-marker' }]);
    await assert.rejects(t.coordinator.profiles.resolve({ profileName: 'missing' }), { name: 'NotFoundError' });
    await t.call('PATCH', '/profiles/blue', { status: 'disabled' });
    await assert.rejects(t.coordinator.profiles.resolve({ profileName: 'blue' }), /disabled/);

    assert.equal((await t.call('DELETE', `/workspaces/${String(ws.json.id)}`)).status, 204);
    assert.deepEqual(await t.coordinator.db.query(`SELECT id FROM profiles WHERE scope = 'workspace'`), [], 'the layer went with its workspace');
  });

  test('webhook profile allowlist: set at creation or replaced, names checked', async () => {
    const made = await t.call('POST', '/dags/billing/webhook', { profileAllowlist: ['prod', 'prod', 'blue'] });
    assert.equal(made.status, 201, JSON.stringify(made.json));
    assert.deepEqual((made.json.webhook as Json).profileAllowlist, ['blue', 'prod']);
    const set = await t.call('PUT', '/dags/billing/webhook/profiles', { profileAllowlist: ['staging'] });
    assert.deepEqual([set.status, set.json.profileAllowlist], [200, ['staging']]);
    assert.equal((await t.call('PUT', '/dags/billing/webhook/profiles', { profileAllowlist: ['Bad Name'] })).status, 400);
    assert.equal((await t.call('PUT', '/dags/other/webhook/profiles', { profileAllowlist: [] })).status, 404);
  });
});
