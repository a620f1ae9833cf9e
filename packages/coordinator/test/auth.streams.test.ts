// An event stream outlives the request that opened it: credentials revoked afterwards (a user
// disabled by an admin) must end it, not keep feeding run events to someone who may no longer read.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';
import { bearer, callWith, mintLicense } from './support/auth-fixtures.js';

const PASSWORD = 'a long enough password';
let t: TestCoordinator;
let admin = '';

before(async () => {
  const { license, licensePublicKey } = mintLicense();
  t = await startTestCoordinator('auth-streams', { hello: 'steps:\n  - echo hi\n' }, { auth: { mode: 'builtin', license, licensePublicKey } });
  const setup = await callWith(t.coordinator.apiUrl, 'POST', '/auth/setup', undefined, { username: 'admin', password: PASSWORD });
  assert.equal(setup.status, 200);
  admin = bearer(setup.json.token as string);
});

after(async () => t.stop());

describe('event streams and revoked credentials', () => {
  test('a viewer disabled while its stream is open is cut off at the next keepalive (15 s)', async () => {
    const made = await callWith(t.coordinator.apiUrl, 'POST', '/users', admin, { username: 'watcher', password: PASSWORD, role: 'viewer' });
    assert.equal(made.status, 201);
    const token = (await callWith(t.coordinator.apiUrl, 'POST', '/auth/login', undefined, { username: 'watcher', password: PASSWORD })).json.token as string;
    const res = await fetch(`${t.coordinator.apiUrl}/events/dag-runs`, { headers: { authorization: bearer(token) } });
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    const disabled = await callWith(t.coordinator.apiUrl, 'PATCH', `/users/${(made.json.user as { id: string }).id}`, admin, { isDisabled: true });
    assert.equal(disabled.status, 200);
    const started = Date.now();
    let ended = false;
    while (!ended && Date.now() - started < 25_000) ended = (await reader.read()).done;
    assert.ok(ended, 'the stream ended');
    assert.ok(Date.now() - started < 20_000, `ended after ${Date.now() - started} ms`);
  });
});
