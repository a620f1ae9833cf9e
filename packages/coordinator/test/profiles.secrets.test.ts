// The secret store on PGlite or PostgreSQL: what the database row holds, rotation to a new key
// while the old one still opens values, the embedded default key, and the refusal without a key.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CAPABILITIES, getSyncConfig } from '@trellis/store';
import { createSilentLogger, GENERATED_KEY_FILE, keyIdOf, openSecretKeyring, ProfileService, SYNC_TOKEN_SECRET_ID, type Principal } from '@trellis/coordinator';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';
import { captureLog } from './support/log-capture.js';

const OLD = randomBytes(32).toString('base64');
const NEW = randomBytes(32).toString('base64');
const MARKER = `marker-${randomBytes(8).toString('hex')}`;
const ADMIN: Principal = { kind: 'user', id: 'u1', name: 'root', role: 'admin' };
const logger = createSilentLogger();
let t: TestCoordinator;

before(async () => {
  t = await startTestCoordinator('profiles_secrets', {}, { secretsKey: OLD });
});
after(async () => t.stop());

const serviceWith = (current: string | undefined, previous: string[]) => new ProfileService(t.coordinator.db, openSecretKeyring({ ...(current !== undefined ? { current } : {}), previous }, CAPABILITIES.postgres, t.dir, logger));

describe('secret store', () => {
  test('the row holds ciphertext, a 12-byte nonce per value and the key id, never the plaintext', async () => {
    await t.call('POST', '/profiles', { name: 'prod' });
    for (const key of ['A', 'B']) assert.equal((await t.call('PUT', `/profiles/prod/secrets/${key}`, { value: MARKER })).status, 200);
    const rows = await t.coordinator.db.query<{ key_id: string; nonce: Uint8Array; ciphertext: Uint8Array; auth_tag: Uint8Array }>('SELECT key_id, nonce, ciphertext, auth_tag FROM profile_secrets');
    assert.equal(rows.length, 2);
    for (const row of rows) {
      assert.equal(row.key_id, keyIdOf(Buffer.from(OLD, 'base64')));
      assert.equal(Buffer.from(row.nonce).length, 12);
      assert.equal(Buffer.from(row.auth_tag).length, 16);
      assert.ok(!Buffer.from(row.ciphertext).includes(MARKER) && !Buffer.from(row.ciphertext).toString('hex').includes(Buffer.from(MARKER).toString('hex')));
    }
    assert.notDeepEqual(Buffer.from(rows[0]!.nonce), Buffer.from(rows[1]!.nonce), 'fresh nonce per value');
    const dump = JSON.stringify(await t.coordinator.db.query('SELECT p.*, e.*, s.* FROM profiles p JOIN profile_entries e ON e.profile_id = p.id LEFT JOIN profile_secrets s ON s.id = e.secret_id'));
    assert.ok(!dump.includes(MARKER));
    assert.ok(!JSON.stringify(await t.coordinator.db.query('SELECT * FROM event_logs')).includes(MARKER), 'no event or audit record holds it');
  });

  test('rotation: a coordinator with the new key and the old one re-seals every value; afterwards the new key alone opens them', async () => {
    const both = serviceWith(NEW, [OLD]);
    assert.equal((await both.resolve({ profileName: 'prod' })).entries[0]?.value, MARKER, 'old values open with a previous key');
    const result = await both.rotateKey(ADMIN);
    assert.deepEqual(result, { keyId: keyIdOf(Buffer.from(NEW, 'base64')), reencrypted: 2, remaining: {} });
    assert.deepEqual((await both.rotateKey(ADMIN)).reencrypted, 0, 'a second rotation has nothing to do');
    const newOnly = serviceWith(NEW, []);
    assert.deepEqual((await newOnly.resolve({ profileName: 'prod' })).entries.map((e) => e.value), [MARKER, MARKER]);
    await assert.rejects(serviceWith(OLD, []).resolve({ profileName: 'prod' }), /does not hold/, 'the old key alone no longer opens them');
    const rows = await t.coordinator.db.query<{ ciphertext: Uint8Array }>('SELECT ciphertext FROM profile_secrets');
    assert.ok(rows.every((r) => !Buffer.from(r.ciphertext).includes(MARKER)));
  });

  test('a value moved to another row does not open (the secret id is bound in)', async () => {
    const [a, b] = await t.coordinator.db.query<{ id: string }>('SELECT id::text AS id FROM profile_secrets ORDER BY id');
    await t.coordinator.db.query('UPDATE profile_secrets SET ciphertext = (SELECT ciphertext FROM profile_secrets WHERE id::text = $1), nonce = (SELECT nonce FROM profile_secrets WHERE id::text = $1), auth_tag = (SELECT auth_tag FROM profile_secrets WHERE id::text = $1) WHERE id::text = $2', [a!.id, b!.id]);
    await assert.rejects(serviceWith(NEW, []).resolve({ profileName: 'prod' }), /altered/);
  });

  test('POST /secrets/rotate-key re-seals under the serving coordinator key and reports what it cannot read', async () => {
    await t.coordinator.db.query(`DELETE FROM profile_entries WHERE kind = 'secret'`);
    await t.coordinator.db.query('DELETE FROM profile_secrets');
    await serviceWith(NEW, []).setSecret(ADMIN, { scope: 'profile', name: 'prod' }, 'C', MARKER);
    const rotated = await t.call('POST', '/secrets/rotate-key');
    assert.equal(rotated.status, 200, JSON.stringify(rotated.json));
    assert.deepEqual(rotated.json, { keyId: keyIdOf(Buffer.from(OLD, 'base64')), reencrypted: 0, remaining: { [keyIdOf(Buffer.from(NEW, 'base64'))]: 1 } });
  });

  test('rotation re-seals the repository sync token too: afterwards the new key alone opens it', async () => {
    const saved = await t.call('PUT', '/sync/config', { enabled: false, repository: 'https://git.example.com/team/dags.git', branch: 'main', auth: { type: 'token', token: MARKER } });
    assert.equal(saved.status, 200, JSON.stringify(saved.json));
    const sealedBefore = (await getSyncConfig(t.coordinator.db))?.token;
    assert.equal(sealedBefore?.keyId, keyIdOf(Buffer.from(OLD, 'base64')), 'sealed by the serving coordinator\'s key');
    const result = await serviceWith(NEW, [OLD]).rotateKey(ADMIN);
    assert.deepEqual([result.reencrypted, result.remaining], [1, {}]);
    const token = (await getSyncConfig(t.coordinator.db))?.token;
    assert.ok(token !== undefined);
    const newOnly = openSecretKeyring({ current: NEW, previous: [] }, CAPABILITIES.postgres, t.dir, logger);
    assert.equal(newOnly.open(token, SYNC_TOKEN_SECRET_ID), MARKER);
    assert.ok(!Buffer.from(token.ciphertext).includes(MARKER));
  });

  test('no key with a PostgreSQL server: storing a secret is refused with a clear 503, variables still work', async () => {
    const log = captureLog();
    openSecretKeyring({ previous: [] }, CAPABILITIES.postgres, t.dir, log.logger);
    assert.match(log.text(), /storing secrets is refused/, 'said at start-up');
    const none = serviceWith(undefined, []);
    await assert.rejects(none.setSecret(ADMIN, { scope: 'global' }, 'X', 'v'), (error: Error & { code?: string }) => error.code === 'service_unavailable' && /SVC_SECRETS_KEY/.test(error.message));
    await assert.rejects(none.rotateKey(ADMIN), /no key-encryption key/);
    assert.equal((await none.setVariable(ADMIN, { scope: 'global' }, 'X', 'v')).value, 'v');
  });

  test('embedded database without a key: one is generated once in the data directory, mode 0600', () => {
    const dir = join(t.dir, 'embedded');
    const log = captureLog();
    const first = openSecretKeyring({ previous: [] }, CAPABILITIES.pglite, dir, log.logger);
    const file = join(dir, GENERATED_KEY_FILE);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.ok(log.lines().some((l) => /generated the key-encryption key/.test(String(l.message)) && l.file === file), log.text());
    assert.ok(!log.text().includes(readFileSync(file, 'utf8').trim()), 'the key itself is never logged');
    const again = openSecretKeyring({ previous: [] }, CAPABILITIES.pglite, dir, logger);
    assert.equal(again.currentKeyId, first.currentKeyId, 'the same key on the next start');
    const sealed = first.seal(MARKER, 'id-1');
    assert.equal(again.open(sealed, 'id-1'), MARKER);
  });
});
