import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { ConfigError, createSilentLogger, loadServerConfig, startCoordinator } from '@trellis/coordinator';
import { startTestCoordinator } from './support/coordinator.js';
import { basic, bearer, callWith } from './support/auth-fixtures.js';

const made: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-auth-modes-'));
  made.push(dir);
  return dir;
}

after(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

describe('auth modes: configuration', () => {
  test('mode none by default; SVC_AUTH_MODE and the auth section of the file merge key by key', () => {
    const cwd = tempDir();
    assert.equal(loadServerConfig({ cwd, env: {} }).auth.mode, 'none');
    const file = join(cwd, 'trellis.yaml');
    writeFileSync(file, 'auth:\n  mode: basic\n  basicUsername: ops\n  tokenTtlSec: 600\n');
    const config = loadServerConfig({ cwd, file, env: { SVC_AUTH_BASIC_PASSWORD: 'from-env-secret' } });
    assert.equal(config.auth.mode, 'basic');
    assert.equal(config.auth.basicUsername, 'ops');
    assert.equal(config.auth.basicPassword, 'from-env-secret');
    assert.equal(config.auth.tokenTtlSec, 600);
    assert.equal(loadServerConfig({ cwd, file, env: { SVC_AUTH_MODE: 'builtin' } }).auth.mode, 'builtin');
  });

  test('mode basic reads the password from a file and needs a user and exactly one password source', () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'pw'), 'file-secret-1\n');
    const config = loadServerConfig({ cwd, env: { SVC_AUTH_MODE: 'basic', SVC_AUTH_BASIC_USERNAME: 'ops', SVC_AUTH_BASIC_PASSWORD_FILE: 'pw' } });
    assert.equal(config.auth.basicPassword, 'file-secret-1');
    assert.throws(() => loadServerConfig({ cwd, env: { SVC_AUTH_MODE: 'basic', SVC_AUTH_BASIC_PASSWORD: 'x' } }), (error: Error) => error instanceof ConfigError && /auth\.basicUsername: required with auth\.mode basic/.test(error.message));
    assert.throws(() => loadServerConfig({ cwd, env: { SVC_AUTH_MODE: 'basic', SVC_AUTH_BASIC_USERNAME: 'ops' } }), /exactly one of basicPasswordHash, basicPassword, basicPasswordFile/);
    assert.throws(() => loadServerConfig({ cwd, env: { SVC_AUTH_MODE: 'open' } }), /auth\.mode/);
    assert.throws(() => loadServerConfig({ cwd, env: { SVC_AUTH_MODE: 'basic', SVC_AUTH_BASIC_USERNAME: 'ops', SVC_AUTH_BASIC_PASSWORD_FILE: 'missing' } }), /auth\.basicPasswordFile/);
  });

  test('a server bound beyond loopback with mode none refuses to start, naming the setting', async () => {
    const cwd = tempDir();
    const config = loadServerConfig({ cwd, env: {}, overrides: { host: '0.0.0.0', port: 0, grpcPort: -1, dataDir: join(cwd, 'data'), dagsDir: join(cwd, 'dags') } });
    await assert.rejects(startCoordinator(config, createSilentLogger(), { watch: false }), (error: Error) => {
      assert.match(error.message, /beyond loopback, with auth\.mode none \(SVC_AUTH_MODE\)/);
      assert.match(error.message, /auth\.allowUnauthenticated: true/);
      return true;
    });
  });

  test('auth.allowUnauthenticated: true lets it start beyond loopback', async () => {
    const cwd = tempDir();
    const config = loadServerConfig({ cwd, env: { SVC_AUTH_ALLOW_UNAUTHENTICATED: 'true' }, overrides: { host: '0.0.0.0', port: 0, grpcPort: -1, dataDir: join(cwd, 'data'), dagsDir: join(cwd, 'dags'), shutdownGraceSec: 0, schedulerEnabled: false } });
    const coordinator = await startCoordinator(config, createSilentLogger(), { watch: false });
    try {
      const res = await fetch(coordinator.apiUrl.replace('0.0.0.0', '127.0.0.1') + '/dags');
      assert.equal(res.status, 200);
    } finally {
      await coordinator.close();
    }
  });
});

describe('auth mode basic', () => {
  for (const source of ['hash', 'password'] as const) {
    test(`the configured user (${source}) is an admin; anything else is 401; public routes stay open`, async () => {
      const secret = 'the ops password';
      const auth = source === 'hash' ? { basicPasswordHash: bcrypt.hashSync(secret, 4) } : { basicPassword: secret };
      const t = await startTestCoordinator(`auth-basic-${source}`, { hello: 'steps:\n  - echo hi\n' }, { auth: { mode: 'basic', basicUsername: 'ops', ...auth } });
      try {
        const api = t.coordinator.apiUrl;
        assert.equal((await callWith(api, 'GET', '/dags', basic('ops', secret))).status, 200);
        assert.equal((await callWith(api, 'GET', '/dags', basic('ops', secret))).status, 200, 'the remembered credential');
        const me = await callWith(api, 'GET', '/auth/me', basic('ops', secret));
        assert.deepEqual(me.json.principal, { kind: 'user', id: 'basic:ops', name: 'ops', role: 'admin' });
        for (const authorization of [basic('ops', 'wrong password'), basic('root', secret), bearer('some.jwt.token'), bearer('svc_key'), 'Digest x', undefined]) {
          const res = await callWith(api, 'GET', '/dags', authorization);
          assert.deepEqual([res.status, res.json.code], [401, 'unauthorized'], String(authorization));
        }
        assert.equal((await callWith(api, 'GET', '/health')).status, 200);
        assert.equal((await callWith(api, 'GET', '/metrics')).status, 200, 'metrics: public by default');
        assert.equal((await callWith(api, 'POST', '/auth/login', undefined, { username: 'ops', password: secret })).status, 400, 'no users outside builtin mode');
      } finally {
        await t.stop();
      }
    });
  }

  test('metrics: private needs credentials', async () => {
    const t = await startTestCoordinator('auth-metrics-private', {}, { metrics: 'private', auth: { mode: 'basic', basicUsername: 'ops', basicPassword: 'the ops password' } });
    try {
      assert.equal((await callWith(t.coordinator.apiUrl, 'GET', '/metrics')).status, 401);
      assert.equal((await callWith(t.coordinator.apiUrl, 'GET', '/metrics', basic('ops', 'the ops password'))).status, 200);
    } finally {
      await t.stop();
    }
  });
});
