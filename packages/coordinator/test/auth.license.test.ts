import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';
import { bearer, callWith, mintLicense } from './support/auth-fixtures.js';

const started: TestCoordinator[] = [];

after(async () => {
  for (const t of started) await t.stop();
});

/** A builtin coordinator with the given license settings, its first admin, and a second user. */
async function withLicense(label: string, license: { license?: string; licensePublicKey?: string }) {
  const t = await startTestCoordinator(label, {}, { auth: { mode: 'builtin', ...license } });
  started.push(t);
  const call = (method: string, path: string, body?: unknown) => callWith(t.coordinator.apiUrl, method, path, admin, body);
  const setup = await callWith(t.coordinator.apiUrl, 'POST', '/auth/setup', undefined, { username: 'admin', password: 'admin password' });
  const admin = bearer(setup.json.token as string);
  return { call, adminId: (setup.json.user as { id: string }).id };
}

describe('Pro license gate', () => {
  test('without a license, creating, updating and deleting users is 403 saying why; listing, viewing and password resets work', async () => {
    const { call, adminId } = await withLicense('license-none', {});
    const refused = await call('POST', '/users', { username: 'dev', password: 'developer pass', role: 'developer' });
    assert.deepEqual([refused.status, refused.json.code], [403, 'forbidden']);
    assert.match(refused.json.message as string, /user management requires a Pro license/);
    assert.equal((await call('PATCH', `/users/${adminId}`, { role: 'viewer' })).status, 403);
    assert.equal((await call('DELETE', '/users/someone')).status, 403);
    assert.equal((await call('GET', '/users')).status, 200);
    assert.equal((await call('GET', `/users/${adminId}`)).status, 200);
    assert.equal((await call('POST', `/users/${adminId}/reset-password`, { newPassword: 'a new admin password' })).status, 200);
  });

  test('a license signed by another key, or expired, is refused; a valid one opens user management', async () => {
    const minted = mintLicense();
    const forged = await withLicense('license-forged', { license: minted.license, licensePublicKey: minted.otherPublicKey });
    const refused = await forged.call('POST', '/users', { username: 'dev', password: 'developer pass', role: 'developer' });
    assert.equal(refused.status, 403);
    assert.match(refused.json.message as string, /Pro license: the configured license is not valid/);
    const expired = mintLicense(-60);
    const old = await withLicense('license-expired', { license: expired.license, licensePublicKey: expired.licensePublicKey });
    const late = await old.call('POST', '/users', { username: 'dev', password: 'developer pass', role: 'developer' });
    assert.equal(late.status, 403);
    assert.match(late.json.message as string, /expired/);
    const valid = await withLicense('license-valid', { license: minted.license, licensePublicKey: minted.licensePublicKey });
    assert.equal((await valid.call('POST', '/users', { username: 'dev', password: 'developer pass', role: 'developer' })).status, 201);
  });
});
