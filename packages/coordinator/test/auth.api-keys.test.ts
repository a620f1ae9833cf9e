// API keys over real HTTP on PGlite or PostgreSQL: shown once, stored hashed, 409/404 as the
// contract says, checked from memory, last use written in batches, every change audited.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { ApiKeyService, createSilentLogger } from '@trellis/coordinator';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';

let t: TestCoordinator;
type Json = Record<string, unknown>;

before(async () => {
  t = await startTestCoordinator('auth_api_keys', { hello: 'steps:\n  - echo hi\n' });
});
after(async () => t.stop());

async function create(body: Json): Promise<{ apiKey: Json; key: string }> {
  const res = await t.call('POST', '/api-keys', body);
  assert.equal(res.status, 201, JSON.stringify(res.json));
  return res.json as { apiKey: Json; key: string };
}

describe('API keys', () => {
  test('create shows the key once; the database holds only its SHA-256; lists and reads never show it', async () => {
    const { apiKey, key } = await create({ name: 'ci', description: 'the CI pipeline', role: 'operator' });
    assert.match(key, /^svc_[0-9a-f]{64}$/);
    assert.equal(apiKey.name, 'ci');
    assert.equal(apiKey.description, 'the CI pipeline');
    assert.equal(apiKey.role, 'operator');
    assert.equal(apiKey.createdBy, 'anonymous');
    assert.ok(key.startsWith(String(apiKey.keyPrefix)) && String(apiKey.keyPrefix).length < 16);
    assert.equal(apiKey.lastUsedAt, undefined, 'never used');
    const rows = await t.coordinator.db.query<{ key_hash: string; name: string }>('SELECT * FROM api_keys');
    assert.equal(rows.find((r) => r.name === 'ci')?.key_hash, createHash('sha256').update(key).digest('hex'));
    assert.ok(!JSON.stringify(rows).includes(key), 'the key itself is not stored');
    const listed = await t.call('GET', '/api-keys');
    assert.ok(!JSON.stringify(listed.json).includes(key));
    assert.deepEqual((listed.json.apiKeys as Json[]).find((k) => k.id === apiKey.id), apiKey);
    const one = await t.call('GET', `/api-keys/${String(apiKey.id)}`);
    assert.deepEqual(one.json, { apiKey });
  });

  test('validation: name 1-100, description <= 500, role of the four; 409 on a duplicate name', async () => {
    assert.equal((await t.call('POST', '/api-keys', { role: 'viewer' })).status, 400);
    assert.equal((await t.call('POST', '/api-keys', { name: '', role: 'viewer' })).status, 400);
    assert.equal((await t.call('POST', '/api-keys', { name: 'x'.repeat(101), role: 'viewer' })).status, 400);
    assert.equal((await t.call('POST', '/api-keys', { name: 'long', description: 'd'.repeat(501), role: 'viewer' })).status, 400);
    const badRole = await t.call('POST', '/api-keys', { name: 'dev', role: 'developer' });
    assert.deepEqual([badRole.status, badRole.json.code], [400, 'bad_request']);
    await create({ name: 'twice', role: 'viewer' });
    const dup = await t.call('POST', '/api-keys', { name: 'twice', role: 'admin' });
    assert.deepEqual([dup.status, dup.json.code], [409, 'already_exists']);
  });

  test('PATCH changes only the given fields; 409 on a taken name; 404 for unknown ids (UUID or not)', async () => {
    const { apiKey } = await create({ name: 'patchme', description: 'before', role: 'viewer' });
    const id = String(apiKey.id);
    const res = await t.call('PATCH', `/api-keys/${id}`, { role: 'manager' });
    assert.equal(res.status, 200);
    const after = res.json.apiKey as Json;
    assert.deepEqual([after.name, after.description, after.role], ['patchme', 'before', 'manager']);
    assert.equal((await t.call('PATCH', `/api-keys/${id}`, { name: 'twice' })).status, 409);
    assert.equal((await t.call('PATCH', `/api-keys/${id}`, { role: 'root' })).status, 400);
    for (const missing of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      assert.equal((await t.call('GET', `/api-keys/${missing}`)).status, 404);
      assert.equal((await t.call('PATCH', `/api-keys/${missing}`, { role: 'viewer' })).status, 404);
      assert.equal((await t.call('DELETE', `/api-keys/${missing}`)).status, 404);
    }
  });

  test('authenticateApiKey: the key gives its principal; changes and deletion take effect at once here', async () => {
    const { apiKey, key } = await create({ name: 'robot', role: 'viewer' });
    const keys = t.coordinator.apiKeys;
    assert.deepEqual(await keys.authenticateApiKey(key), { kind: 'apiKey', id: apiKey.id, name: 'robot', role: 'viewer' });
    assert.equal(await keys.authenticateApiKey(`${key}x`), undefined);
    assert.equal(await keys.authenticateApiKey('svc_wh_0123'), undefined, 'webhook tokens are not API keys');
    assert.equal(await keys.authenticateApiKey('eyJhbGciOi.jwt.here'), undefined);
    await t.call('PATCH', `/api-keys/${String(apiKey.id)}`, { role: 'admin', name: 'robot2' });
    assert.deepEqual(await keys.authenticateApiKey(key), { kind: 'apiKey', id: apiKey.id, name: 'robot2', role: 'admin' });
    assert.equal((await t.call('DELETE', `/api-keys/${String(apiKey.id)}`)).status, 204);
    assert.equal(await keys.authenticateApiKey(key), undefined);
    assert.equal((await t.call('GET', `/api-keys/${String(apiKey.id)}`)).status, 404);
  });

  test("another coordinator's cache: an unknown key re-reads the keys (at most once a second); a deleted one stops within the cache age", async () => {
    const longLived = new ApiKeyService({ db: t.coordinator.db, logger: createSilentLogger(), cacheMs: 60_000 });
    const shortLived = new ApiKeyService({ db: t.coordinator.db, logger: createSilentLogger(), cacheMs: 300 });
    try {
      assert.equal(await longLived.authenticateApiKey('svc_0000'), undefined, 'warms its cache');
      const { apiKey, key } = await create({ name: 'elsewhere', role: 'manager' });
      assert.equal(await longLived.authenticateApiKey(key), undefined, 'no second read within a second');
      await new Promise((r) => setTimeout(r, 1100));
      assert.equal((await longLived.authenticateApiKey(key))?.role, 'manager');
      assert.equal((await shortLived.authenticateApiKey(key))?.role, 'manager');
      assert.equal((await t.call('DELETE', `/api-keys/${String(apiKey.id)}`)).status, 204);
      await new Promise((r) => setTimeout(r, 400));
      assert.equal(await shortLived.authenticateApiKey(key), undefined);
    } finally {
      await longLived.stop();
      await shortLived.stop();
    }
  });

  test('checking a key costs no database statement; last use is written in one batch and shown before', async () => {
    const { apiKey, key } = await create({ name: 'hot', role: 'operator' });
    const keys = t.coordinator.apiKeys;
    await keys.authenticateApiKey(key);
    const db = t.coordinator.db;
    const original = db.query.bind(db);
    let statements = 0;
    db.query = ((sql: string, params?: unknown[]) => {
      statements += 1;
      return original(sql, params);
    });
    try {
      for (let i = 0; i < 500; i += 1) assert.ok((await keys.authenticateApiKey(key)) !== undefined);
    } finally {
      db.query = original;
    }
    assert.equal(statements, 0, 'a cached key is checked without the database');
    const shown = ((await t.call('GET', `/api-keys/${String(apiKey.id)}`)).json.apiKey as Json).lastUsedAt;
    assert.equal(typeof shown, 'string', 'pending use is shown');
    const [before] = await db.query<{ last_used_at: Date | null }>('SELECT last_used_at FROM api_keys WHERE name = $1', ['hot']);
    assert.equal(before?.last_used_at, null, 'not written per request');
    await keys.flush();
    const [written] = await db.query<{ last_used_at: Date | null }>('SELECT last_used_at FROM api_keys WHERE name = $1', ['hot']);
    assert.ok(written?.last_used_at instanceof Date);
    assert.equal(written.last_used_at.toISOString(), shown);
  });

  test('every key change is an audit event naming the actor, never the key', async () => {
    const { apiKey, key } = await create({ name: 'audited', role: 'viewer' });
    await t.call('PATCH', `/api-keys/${String(apiKey.id)}`, { description: 'x' });
    await t.call('DELETE', `/api-keys/${String(apiKey.id)}`);
    const res = await t.call('GET', '/event-logs?kind=audit&limit=100');
    assert.equal(res.status, 200, JSON.stringify(res.json));
    const events = JSON.stringify(res.json);
    assert.ok(!events.includes(key), 'the key is in no event');
    const mine = res.json.entries as Json[];
    const types = mine.filter((e) => (e.data as Json).apiKeyId === apiKey.id).map((e) => e.type);
    assert.deepEqual(types.sort(), ['api_key.created', 'api_key.deleted', 'api_key.updated']);
    for (const event of mine) assert.equal(event.userId, 'anonymous');
  });
});
