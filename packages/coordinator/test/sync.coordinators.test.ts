// Repository sync with two coordinators on one database (PGlite: one handle; PostgreSQL with
// TRELLIS_TEST_DATABASE_URL: two pools, so the advisory lock is the one that decides): pulls
// started on both at once each complete, and what one pulls the other serves; a diff on one
// answers while the other's pull holds the sync lock.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { openTestDb } from '@trellis/store/testing';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';
import { startGitHttpRemote, type GitHttpRemote } from './support/git-http-server.js';

let a: TestCoordinator;
let b: TestCoordinator;
let remote: GitHttpRemote;
let cleanup: () => Promise<void>;
/** Run by A's next pull between its plan and its write, while it holds the sync lock. */
let inPullWindow: (() => Promise<void>) | undefined;

before(async () => {
  remote = await startGitHttpRemote({ 'shared.yaml': 'steps:\n  - name: s\n    command: echo shared\n' });
  const opened = await openTestDb('sync_coordinators');
  cleanup = opened.cleanup;
  const secretsKey = randomBytes(32).toString('base64');
  const syncPullWindow = async (): Promise<void> => {
    const run = inPullWindow;
    inPullWindow = undefined;
    await run?.();
  };
  a = await startTestCoordinator('sync_a', {}, { secretsKey }, { db: opened.db, syncPullWindow });
  b = await startTestCoordinator('sync_b', {}, { secretsKey }, { db: opened.second !== undefined ? await opened.second() : opened.db });
});

after(async () => {
  await a.stop();
  await b.stop();
  await cleanup();
  await remote.close();
});

test('pulls on two coordinators at once both complete, and each serves what the other pulled', async () => {
  const config = await a.call('PUT', '/sync/config', { enabled: true, repository: remote.url, auth: { type: 'token', token: remote.token } });
  assert.equal(config.status, 200, JSON.stringify(config.json));
  const other = remote.clone('other');
  const [first, second] = await Promise.all([a.call('POST', '/sync/pull'), b.call('POST', '/sync/pull')]);
  assert.deepEqual([first.json.success, second.json.success], [true, true], JSON.stringify([first.json, second.json]));
  for (const t of [a, b]) assert.equal((await t.call('GET', '/dags/shared/spec')).json.spec, 'steps:\n  - name: s\n    command: echo shared\n');
  other.write('added.yaml', 'steps:\n  - name: s\n    command: echo added\n');
  const commit = other.commitAndPush('added on the other side');
  assert.equal((await a.call('POST', '/sync/pull')).json.success, true);
  const started = Date.now();
  while ((await b.call('GET', '/dags/added/spec')).status !== 200) {
    assert.ok(Date.now() - started < 5000, 'the DAG pulled through A did not reach B within 5 s');
    await new Promise((r) => setTimeout(r, 20));
  }
  const status = await b.call('GET', '/sync/status');
  assert.deepEqual([status.json.lastSyncCommit, (status.json.counts as Record<string, number>).synced], [commit, 2]);
});

test('a diff on one coordinator answers while the other\'s pull holds the sync lock', async () => {
  const other = remote.clone('differ');
  other.write('shared.yaml', 'steps:\n  - name: s\n    command: echo changed\n');
  other.commitAndPush('change shared');
  let diff: Awaited<ReturnType<TestCoordinator['call']>> | undefined;
  inPullWindow = async () => {
    const deadline = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 10_000).unref());
    diff = await Promise.race([b.call('GET', '/sync/items/shared/diff'), deadline]);
  };
  assert.equal((await a.call('POST', '/sync/pull')).json.success, true);
  assert.equal(diff?.status, 200, `the diff waited for the pull, or failed: ${JSON.stringify(diff?.json)}`);
  // The pull had not recorded the new version yet: the diff shows the one the state names, as status does.
  assert.equal(diff?.json.remoteContent, 'steps:\n  - name: s\n    command: echo shared\n');
  assert.equal((await b.call('GET', '/sync/items/shared/diff')).json.remoteContent, 'steps:\n  - name: s\n    command: echo changed\n', 'after the pull, B fetches the version the state now names');
});
