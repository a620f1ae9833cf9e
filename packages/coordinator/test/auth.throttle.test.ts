import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';
import { basic, callWith } from './support/auth-fixtures.js';

let one: TestCoordinator;
let two: TestCoordinator;

before(async () => {
  one = await startTestCoordinator('auth-throttle', {}, { auth: { mode: 'builtin' } });
  two = await startTestCoordinator('auth-throttle-2', {}, { auth: { mode: 'builtin' }, coordinatorId: 'second' }, { db: one.coordinator.db });
  const setup = await callWith(one.coordinator.apiUrl, 'POST', '/auth/setup', undefined, { username: 'admin', password: 'the admin password' });
  assert.equal(setup.status, 200);
});

after(async () => {
  await two.stop();
  await one.stop();
});

const login = (t: TestCoordinator, username: string, password: string) => callWith(t.coordinator.apiUrl, 'POST', '/auth/login', undefined, { username, password });

describe('brute-force throttle', () => {
  test('five failures for one username block it on every coordinator with 429 and Retry-After, even for the right password', async () => {
    for (let i = 0; i < 5; i += 1) assert.equal((await login(i % 2 === 0 ? one : two, 'admin', `guess number ${i}`)).status, 401);
    for (const t of [one, two]) {
      const blocked = await login(t, 'admin', 'the admin password');
      assert.deepEqual([blocked.status, blocked.json.code], [429, 'too_many_requests']);
      const retryAfter = Number(blocked.headers.get('retry-after'));
      assert.ok(retryAfter > 0 && retryAfter <= 300, `Retry-After ${retryAfter}`);
    }
  });

  test('the state is in the database: the block outlives the counting coordinator', async () => {
    const third = await startTestCoordinator('auth-throttle-3', {}, { auth: { mode: 'builtin' }, coordinatorId: 'third' }, { db: one.coordinator.db });
    try {
      assert.equal((await login(third, 'admin', 'the admin password')).status, 429);
    } finally {
      await third.stop();
    }
  });

  test('Basic credentials are guesses too: counted, and refused while the username is blocked', async () => {
    assert.equal((await callWith(one.coordinator.apiUrl, 'GET', '/dags', basic('admin', 'the admin password'))).status, 429, 'admin is blocked by the logins above');
    for (let i = 0; i < 5; i += 1) assert.equal((await callWith(two.coordinator.apiUrl, 'GET', '/dags', basic('ghost', `guess ${i}`))).status, 401);
    const blocked = await callWith(one.coordinator.apiUrl, 'GET', '/dags', basic('ghost', 'guess 5'));
    assert.deepEqual([blocked.status, blocked.json.code], [429, 'too_many_requests']);
    const audited = await one.coordinator.db.query<{ data: { username: string; method: string } }>("SELECT data FROM event_logs WHERE kind = 'audit' AND type = 'auth.login.failed' AND data->>'method' = 'basic'");
    assert.deepEqual(audited.map((row) => row.data.username), ['ghost', 'ghost', 'ghost', 'ghost', 'ghost'], 'each failed Basic guess is a failed login in the audit trail');
  });

  test('guesses sent in parallel are counted one after another: a burst gets no more tries than a sequence', async () => {
    // Its own database: the address count of the tests around it stays theirs.
    const fresh = await startTestCoordinator('auth-throttle-burst', {}, { auth: { mode: 'builtin' } });
    try {
      const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => login(fresh, 'burst', `parallel guess ${i}`)));
      const statuses = answers.map((a) => a.status).sort();
      assert.deepEqual(statuses, [401, 401, 401, 401, 401, 429, 429, 429]);
    } finally {
      await fresh.stop();
    }
  });

  test('one address failing on many usernames is blocked too', async () => {
    let status = 0;
    let attempts = 0;
    while (status !== 429 && attempts < 30) {
      attempts += 1;
      status = (await login(one, `user${attempts}`, 'wrong password')).status;
    }
    assert.equal(status, 429);
    // 10 failures from this address above; the address limit is 20.
    assert.ok(attempts >= 10, `blocked after ${attempts} more attempts from one address, not earlier`);
  });
});
