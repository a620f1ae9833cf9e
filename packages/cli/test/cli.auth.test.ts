import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSilentLogger, loadServerConfig, startCoordinator, type Coordinator } from '@trellis/coordinator';
import { trellis as trellisIn } from './support/trellis.js';

const dir = mkdtempSync(join(tmpdir(), 'trellis-cli-auth-'));
let coordinator: Coordinator;
let token = '';

const trellis = (...args: string[]) => trellisIn(dir, ...args);

before(async () => {
  mkdirSync(join(dir, 'dags'));
  writeFileSync(join(dir, 'dags', 'hello.yaml'), 'steps:\n  - name: greet\n    command: echo hello\n');
  const config = loadServerConfig({ cwd: dir, env: { SVC_AUTH_MODE: 'builtin' }, overrides: { port: 0, grpcPort: -1, dagsDir: join(dir, 'dags'), dataDir: join(dir, 'data'), shutdownGraceSec: 0 } });
  coordinator = await startCoordinator(config, createSilentLogger(), { watch: false });
  const res = await fetch(`${coordinator.apiUrl}/auth/setup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'the admin password' }) });
  token = ((await res.json()) as { token: string }).token;
});

after(async () => {
  await coordinator.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('trellis client commands with auth on', () => {
  test('without a token the coordinator refuses (exit 1, unauthorized); --token and SVC_TOKEN are sent as Bearer', async () => {
    const refused = await trellis('list', '--server', coordinator.apiUrl);
    assert.equal(refused.code, 1);
    assert.match(refused.err, /^unauthorized: /);
    const listed = await trellis('list', '--server', coordinator.apiUrl, '--token', token);
    assert.equal(listed.code, 0, listed.err);
    assert.match(listed.out, /hello/);
    process.env.SVC_TOKEN = token;
    try {
      const started = await trellis('start', 'hello', '--server', coordinator.apiUrl, '--wait');
      assert.equal(started.code, 0, started.err);
    } finally {
      delete process.env.SVC_TOKEN;
    }
    assert.equal((await trellis('history', 'hello', '--server', coordinator.apiUrl, '--token', 'not-a-token')).code, 1);
  });
});
