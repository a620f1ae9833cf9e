import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openTestDb } from '@trellis/store/testing';
import { createSilentLogger, loadServerConfig, startCoordinator, type Coordinator, type Principal } from '@trellis/coordinator';
import { bearer, callWith } from './support/auth-fixtures.js';

/** What the API key service will supply: here a fixed table, so the hook itself is what is tested. */
const KEYS: Record<string, Principal> = {
  svc_viewer_key: { kind: 'apiKey', id: 'key-1', name: 'dashboards', role: 'viewer' },
  svc_wh_hook: { kind: 'webhook', id: 'hook-1', name: 'hello', role: 'operator' },
};

const dir = mkdtempSync(join(tmpdir(), 'trellis-api-key-hook-'));
let coordinator: Coordinator;
let cleanup: () => Promise<void>;
const asked: string[] = [];

before(async () => {
  mkdirSync(join(dir, 'dags'));
  const opened = await openTestDb('auth-api-key-hook');
  cleanup = opened.cleanup;
  const config = loadServerConfig({ cwd: dir, env: { SVC_AUTH_MODE: 'builtin' }, overrides: { port: 0, grpcPort: -1, dagsDir: join(dir, 'dags'), dataDir: join(dir, 'data'), shutdownGraceSec: 0 } });
  coordinator = await startCoordinator(config, createSilentLogger(), {
    watch: false,
    db: opened.db,
    checkResponses: true,
    apiKeys: (token) => {
      asked.push(token);
      return Promise.resolve(KEYS[token]);
    },
  });
});

after(async () => {
  await coordinator.close();
  await cleanup();
  rmSync(dir, { recursive: true, force: true });
});

describe('the injected resolver of svc_ secrets', () => {
  test("a key's principal meets the same permission table; unknown keys are 401; webhook tokens only on the webhook route", async () => {
    const api = coordinator.apiUrl;
    assert.equal((await callWith(api, 'GET', '/dags', bearer('svc_viewer_key'))).status, 200);
    const me = await callWith(api, 'GET', '/auth/me', bearer('svc_viewer_key'));
    assert.deepEqual(me.json.principal, KEYS.svc_viewer_key);
    const denied = await callWith(api, 'DELETE', '/dags/anything', bearer('svc_viewer_key'));
    assert.deepEqual([denied.status, denied.json.code], [403, 'forbidden']);
    const unknown = await callWith(api, 'GET', '/dags', bearer('svc_unknown'));
    assert.deepEqual([unknown.status, unknown.json.code], [401, 'unauthorized']);
    assert.equal((await callWith(api, 'GET', '/dags', bearer('svc_wh_hook'))).status, 401);
    assert.deepEqual(asked, ['svc_viewer_key', 'svc_viewer_key', 'svc_viewer_key', 'svc_unknown', 'svc_wh_hook']);
  });
});
