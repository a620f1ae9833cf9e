// Parameters of the contract this service does not implement yet (remote nodes) are refused
// with 400 naming them, never accepted and ignored; a runtime profile that does not exist is
// refused the same way on every start endpoint (runs.profiles.test.ts covers the rest).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';

let t: TestCoordinator;
const SPEC = 'steps:\n  - name: s\n    command: "true"\n';

before(async () => {
  t = await startTestCoordinator('api_unsupported', { hello: SPEC });
});
after(async () => t.stop());

async function runCount(): Promise<number> {
  const res = await t.call('GET', '/dag-runs?limit=500');
  assert.equal(res.status, 200);
  return (res.json.dagRuns as unknown[]).length;
}

function assertRefused(res: { status: number; json: Record<string, unknown> }, parameter: string, what: string): void {
  assert.equal(res.status, 400, `${what}: ${JSON.stringify(res.json)}`);
  assert.equal(res.json.code, 'bad_request', what);
  assert.match(String(res.json.message), new RegExp(parameter), what);
}

describe('profileName', () => {
  test('start, start-sync, enqueue and the inline endpoints refuse a missing or malformed profile, and start nothing', async () => {
    const before = await runCount();
    const starts: Array<[string, Record<string, unknown>]> = [
      ['/dags/hello/start', {}],
      ['/dags/hello/start-sync', { timeout: 5 }],
      ['/dags/hello/enqueue', {}],
      ['/dag-runs', { spec: SPEC }],
      ['/dag-runs/enqueue', { spec: SPEC, name: 'inline' }],
    ];
    for (const [path, body] of starts) {
      assertRefused(await t.call('POST', path, { ...body, profileName: '' }), 'profileName', `${path} ""`);
      const missing = await t.call('POST', path, { ...body, profileName: 'no-such-profile' });
      assert.deepEqual([missing.status, missing.json.code, missing.json.message], [404, 'not_found', 'Profile no-such-profile not found'], path);
    }
    assert.equal(await runCount(), before, 'no run was created');
    const plain = await t.call('POST', '/dags/hello/start', {});
    assert.equal(plain.status, 200, 'without profileName the start works');
  });
});

describe('remoteNode', () => {
  test('any node but "local" is refused on reads and on starts; "local" and absence are served', async () => {
    const before = await runCount();
    for (const [method, path, body] of [
      ['GET', '/dag-runs?remoteNode=other', undefined],
      ['GET', '/dags?remoteNode=other', undefined],
      ['GET', '/workers?remoteNode=other', undefined],
      ['POST', '/dag-runs?remoteNode=other', { spec: SPEC }],
      ['POST', '/dag-runs/enqueue?remoteNode=other', { spec: SPEC }],
      ['POST', '/dags/hello/start?remoteNode=other', {}],
    ] as const) {
      assertRefused(await t.call(method, path, body), 'remoteNode', `${method} ${path}`);
    }
    assert.equal(await runCount(), before, 'no run was created');
    assert.equal((await t.call('GET', '/dag-runs?remoteNode=local')).status, 200);
    const local = await t.call('POST', '/dag-runs?remoteNode=local', { spec: SPEC, name: 'here' });
    assert.equal(local.status, 200, JSON.stringify(local.json));
    assert.equal(await runCount(), before + 1);
  });
});
