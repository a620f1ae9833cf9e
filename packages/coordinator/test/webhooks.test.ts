// Webhooks over real HTTP on PGlite or PostgreSQL: one per DAG, a `svc_wh_` token shown once and
// stored hashed, 401/403/404/409 as the contract lists, runs through the normal queue with
// WEBHOOK_PAYLOAD in the steps' environment, optional HMAC signatures, audit events.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';

let t: TestCoordinator;
type Json = Record<string, unknown>;

const DAGS = {
  hooked: 'steps:\n  - name: show\n    command: printf "%s" "$WEBHOOK_PAYLOAD"\n',
  plain: 'steps:\n  - echo plain\n',
  signed: 'steps:\n  - echo signed\n',
  doomed: 'steps:\n  - echo doomed\n',
};

before(async () => {
  t = await startTestCoordinator('webhooks', DAGS);
});
after(async () => t.stop());

async function createHook(fileName: string, body: Json = {}): Promise<{ webhook: Json; token: string; signingSecret?: string }> {
  const res = await t.call('POST', `/dags/${fileName}/webhook`, body);
  assert.equal(res.status, 201, JSON.stringify(res.json));
  return res.json as { webhook: Json; token: string; signingSecret?: string };
}

async function call(fileName: string, token: string | undefined, body: Json | string = {}, headers: Record<string, string> = {}): Promise<{ status: number; json: Json }> {
  const res = await fetch(`${t.coordinator.apiUrl}/webhooks/${fileName}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}), ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text === '' ? {} : (JSON.parse(text) as Json) };
}

function signature(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

describe('webhook management', () => {
  test('create shows the token once and stores its hash; one per DAG; 404 for a missing DAG', async () => {
    const { webhook, token, signingSecret } = await createHook('hooked');
    assert.match(token, /^svc_wh_[0-9a-f]{64}$/);
    assert.equal(signingSecret, undefined);
    assert.equal(webhook.dagName, 'hooked');
    assert.equal(webhook.enabled, true);
    assert.equal(webhook.signatureRequired, false);
    assert.ok(token.startsWith(String(webhook.tokenPrefix)));
    const [row] = await t.coordinator.db.query<{ token_hash: string }>('SELECT token_hash FROM webhooks WHERE dag_name = $1', ['hooked']);
    assert.equal(row?.token_hash, createHash('sha256').update(token).digest('hex'));
    const again = await t.call('POST', '/dags/hooked/webhook');
    assert.deepEqual([again.status, again.json.code], [409, 'already_exists']);
    assert.equal((await t.call('POST', '/dags/nothere/webhook')).status, 404);
    const one = await t.call('GET', '/dags/hooked/webhook');
    assert.deepEqual(one.json, webhook, 'the object, unwrapped');
    assert.equal((await t.call('GET', '/dags/plain/webhook')).status, 404);
    const list = await t.call('GET', '/webhooks');
    assert.deepEqual((list.json.webhooks as Json[]).map((w) => w.dagName), ['hooked']);
    assert.ok(!JSON.stringify(list.json).includes(token));
  });
});

describe('webhook calls', () => {
  test("a call starts a run whose steps see the payload; the answer names the run and the DAG", async () => {
    const { token } = await createHook('plain');
    const { token: hookedToken } = await regenerate('hooked');
    const payload = { ref: 'refs/heads/main', commits: [{ id: 'abc', message: 'it\'s "quoted"' }] };
    const res = await call('hooked', hookedToken, { payload, dagRunId: 'hook-1' });
    assert.deepEqual([res.status, res.json], [200, { dagRunId: 'hook-1', dagName: 'hooked' }]);
    const run = await t.waitForRunStatus('hooked', 'hook-1', [2, 4]);
    assert.equal(run.status, 4, JSON.stringify(run));
    const log = await t.call('GET', '/dag-runs/hooked/hook-1/steps/show/log');
    assert.deepEqual(JSON.parse(String(log.json.content)), payload);
    const bare = await call('plain', token);
    assert.equal(bare.status, 200);
    assert.equal(typeof bare.json.dagRunId, 'string');
    const hook = await t.call('GET', '/dags/hooked/webhook');
    assert.equal(typeof hook.json.lastUsedAt, 'string');
  });

  test('dagRunId is idempotent: reuse answers 409 and starts nothing', async () => {
    const { token } = await regenerate('plain');
    assert.equal((await call('plain', token, { dagRunId: 'once' })).status, 200);
    const twice = await call('plain', token, { dagRunId: 'once' });
    assert.deepEqual([twice.status, twice.json.code], [409, 'already_exists']);
    const runs = (await t.call('GET', '/dag-runs?name=plain&dagRunId=once')).json.dagRuns as Json[];
    assert.equal(runs.length, 1);
  });

  test('401 without or with a wrong token (API keys and other DAGs\' tokens too); 404 without a webhook', async () => {
    const { token } = await regenerate('plain');
    const hooked = await regenerate('hooked');
    const apiKey = (await t.call('POST', '/api-keys', { name: 'not-a-hook', role: 'admin' })).json.key as string;
    for (const bad of [undefined, 'svc_wh_nope', hooked.token, apiKey, `${token}0`]) {
      const res = await call('plain', bad);
      assert.deepEqual([res.status, res.json.code], [401, 'unauthorized'], String(bad));
      assert.equal(res.json.message, 'Invalid or missing webhook token');
    }
    const basic = await fetch(`${t.coordinator.apiUrl}/webhooks/plain`, { method: 'POST', headers: { authorization: `Basic ${Buffer.from(`x:${token}`).toString('base64')}` } });
    assert.equal(basic.status, 401);
    assert.equal((await call('signed', token)).status, 404, 'the DAG has no webhook');
    assert.equal((await call('nosuchdag', token)).status, 404);
    assert.equal((await call('plain', token, '{"payload": "not an object"}')).status, 400);
    const profiled = await call('plain', token, {}, { 'x-svc-profile': 'prod' });
    assert.deepEqual([profiled.status, profiled.json.code], [403, 'forbidden'], 'a profile off the allowlist: refused, not ignored');
    const malformed = await call('plain', token, {}, { 'x-svc-profile': 'Not A Slug' });
    assert.deepEqual([malformed.status, malformed.json.code], [400, 'bad_request']);
  });

  test('a disabled webhook answers 403 until enabled; regenerate retires the old token', async () => {
    const { token } = await regenerate('plain');
    const off = await t.call('POST', '/dags/plain/webhook/toggle', { enabled: false });
    assert.deepEqual([off.status, off.json.enabled], [200, false]);
    const refused = await call('plain', token);
    assert.deepEqual([refused.status, refused.json.code, refused.json.message], [403, 'forbidden', 'Webhook is disabled']);
    assert.equal((await t.call('POST', '/dags/plain/webhook/toggle', {})).status, 400);
    assert.equal((await t.call('POST', '/dags/plain/webhook/toggle', { enabled: true })).status, 200);
    assert.equal((await call('plain', token)).status, 200);
    const fresh = await regenerate('plain');
    assert.notEqual(fresh.token, token);
    assert.equal((await call('plain', token)).status, 401);
    assert.equal((await call('plain', fresh.token)).status, 200);
    assert.equal((await t.call('POST', '/dags/nothere/webhook/regenerate')).status, 404);
    assert.equal((await t.call('POST', '/dags/nothere/webhook/toggle', { enabled: true })).status, 404);
  });

  test('delete: 204, then 404 for the webhook and its calls; a deleted or renamed DAG takes its webhook with it', async () => {
    const { token } = await createHook('doomed');
    assert.equal((await t.call('DELETE', '/dags/doomed')).status, 204);
    const gone = await call('doomed', token);
    assert.deepEqual([gone.status, gone.json.code], [404, 'not_found']);
    assert.equal((await t.call('GET', '/dags/doomed/webhook')).status, 404, 'removed with its DAG');
    // A new DAG under the old name does not inherit the token an outside sender holds.
    assert.equal((await t.call('POST', '/dags', { name: 'doomed' })).status, 201);
    assert.equal((await call('doomed', token)).status, 404);
    const renamed = await createHook('doomed');
    assert.equal((await t.call('POST', '/dags/doomed/rename', { newFileName: 'reborn' })).status, 200);
    assert.equal((await t.call('POST', '/dags', { name: 'doomed' })).status, 201);
    assert.equal((await call('doomed', renamed.token)).status, 404);
    assert.equal((await t.call('GET', '/dags/reborn/webhook')).status, 404);
    const own = await createHook('doomed');
    assert.equal((await t.call('DELETE', '/dags/doomed/webhook')).status, 204);
    assert.equal((await t.call('DELETE', '/dags/doomed/webhook')).status, 404);
    assert.equal((await call('doomed', own.token)).status, 404);
  });
});

describe('signed webhook calls', () => {
  test('a signing secret is issued once; calls need a fresh timestamp and an HMAC of it and the raw body', async () => {
    const { webhook, token, signingSecret } = await createHook('signed', { requireSignature: true });
    assert.equal(webhook.signatureRequired, true);
    assert.match(String(signingSecret), /^[0-9a-f]{64}$/);
    const secret = String(signingSecret);
    const body = JSON.stringify({ payload: { action: 'push' } });
    const now = String(Math.floor(Date.now() / 1000));
    const unsigned = await call('signed', token, body);
    assert.deepEqual([unsigned.status, unsigned.json.code], [401, 'unauthorized']);
    const ok = await call('signed', token, body, { 'x-svc-timestamp': now, 'x-svc-signature': signature(secret, now, body) });
    assert.equal(ok.status, 200, JSON.stringify(ok.json));
    const stale = String(Math.floor(Date.now() / 1000) - 6 * 60);
    assert.equal((await call('signed', token, body, { 'x-svc-timestamp': stale, 'x-svc-signature': signature(secret, stale, body) })).status, 401, 'a replay after 5 minutes');
    const tampered = JSON.stringify({ payload: { action: 'delete' } });
    assert.equal((await call('signed', token, tampered, { 'x-svc-timestamp': now, 'x-svc-signature': signature(secret, now, body) })).status, 401);
    assert.equal((await call('signed', token, body, { 'x-svc-timestamp': now, 'x-svc-signature': signature('wrong', now, body) })).status, 401);
    const later = String(Number(now) + 1);
    assert.equal((await call('signed', token, body, { 'x-svc-timestamp': later, 'x-svc-signature': signature(secret, now, body) })).status, 401, 'the timestamp is signed');
    assert.equal((await call('signed', undefined, body, { 'x-svc-timestamp': now, 'x-svc-signature': signature(secret, now, body) })).status, 401, 'the token is still required');
    const renewed = await t.call('POST', '/dags/signed/webhook/regenerate');
    assert.match(String(renewed.json.signingSecret), /^[0-9a-f]{64}$/);
    assert.notEqual(renewed.json.signingSecret, secret);
  });
});

describe('webhook audit', () => {
  test('changes and triggered runs are audit events naming the actor; no token or secret in any event', async () => {
    const res = await t.call('GET', '/event-logs?kind=audit&limit=500');
    const entries = res.json.entries as Json[];
    const types = new Set(entries.map((e) => e.type));
    for (const type of ['webhook.created', 'webhook.regenerated', 'webhook.disabled', 'webhook.enabled', 'webhook.deleted', 'webhook.triggered']) assert.ok(types.has(type), type);
    const hook = (await t.call('GET', '/dags/hooked/webhook')).json;
    const triggered = entries.find((e) => e.type === 'webhook.triggered' && e.dagRunId === 'hook-1');
    assert.ok(triggered, 'the run of hook-1');
    assert.equal(triggered.userId, hook.id);
    assert.equal(triggered.dagName, 'hooked');
    const text = JSON.stringify(entries);
    assert.doesNotMatch(text, /svc_wh_[0-9a-f]{20}/);
    const secrets = await t.coordinator.db.query<{ signing_secret: string | null }>('SELECT signing_secret FROM webhooks WHERE signing_secret IS NOT NULL');
    for (const { signing_secret: secret } of secrets) assert.ok(secret !== null && !text.includes(secret));
  });
});

async function regenerate(fileName: string): Promise<{ webhook: Json; token: string }> {
  const res = await t.call('POST', `/dags/${fileName}/webhook/regenerate`);
  assert.equal(res.status, 200, JSON.stringify(res.json));
  return res.json as { webhook: Json; token: string };
}
