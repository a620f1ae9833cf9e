// Repository sync against a real git smart-HTTP remote (git http-backend behind a token check,
// started here) on PGlite, or PostgreSQL with TRELLIS_TEST_DATABASE_URL: settings with a sealed
// token, pull of new and changed items, publish seen by another clone, conflicts (409 with the
// remote author and message), force, diff, discard, move, delete, forget, delete-missing,
// cleanup, a wrong token and a remote that goes away mid-pull (nothing changed), read-only
// mode refusing API writes, auto-sync picking up a push within its interval, a run of a
// synced definition naming the commit it came from, an API edit landing between a pull's plan
// and its write (kept, in conflict), a diff answering while a pull is held, and an unreachable
// repository answering 503 with its host and without the token.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';
import { startGitHttpRemote, type GitClone, type GitHttpRemote } from './support/git-http-server.js';

const HELLO = 'steps:\n  - name: greet\n    command: echo hello\n';
const RUNBOOK = '---\ntitle: Starting up\n---\n# Start\n';

let t: TestCoordinator;
let remote: GitHttpRemote;
let other: GitClone;
/** Run by the next pull between its plan and its write (the coordinator's pull window seam). */
let inPullWindow: (() => Promise<void>) | undefined;

type Json = Record<string, unknown>;

async function ok(method: string, path: string, body?: unknown, status = 200): Promise<Json> {
  const answer = await t.call(method, path, body);
  assert.equal(answer.status, status, `${method} ${path}: ${JSON.stringify(answer.json)}`);
  return answer.json;
}

async function statusOf(itemId: string): Promise<string | undefined> {
  const status = await ok('GET', '/sync/status');
  return (status.items as Array<{ itemId: string; status: string }>).find((item) => item.itemId === itemId)?.status;
}

async function spec(fileName: string): Promise<string | undefined> {
  const answer = await t.call('GET', `/dags/${fileName}/spec`);
  return answer.status === 200 ? String(answer.json.spec) : undefined;
}

const item = (itemId: string): string => `/sync/items/${encodeURIComponent(itemId)}`;

before(async () => {
  remote = await startGitHttpRemote({ 'hello.yaml': HELLO, 'docs/runbooks/start.md': RUNBOOK, 'notes.txt': 'not an item\n' });
  other = remote.clone('someone-else');
  t = await startTestCoordinator('sync_repository', { 'local-only': 'steps:\n  - name: a\n    command: echo local\n' }, { secretsKey: randomBytes(32).toString('base64') }, {
    syncPullWindow: async () => {
      const run = inPullWindow;
      inPullWindow = undefined;
      await run?.();
    },
  });
});

after(async () => {
  await t.stop();
  await remote.close();
});

describe('repository sync', () => {
  test('config: defaults, then settings with a token that is sealed and never returned; test-connection reaches the branch', async () => {
    const defaults = await ok('GET', '/sync/config');
    assert.deepEqual([defaults.enabled, defaults.branch, (defaults.auth as Json).type], [false, 'main', 'none']);
    assert.equal((await t.call('POST', '/sync/pull')).status, 400, 'pull before sync is enabled');
    const bad = await t.call('PUT', '/sync/config', { enabled: true, repository: 'git@example.com:x/y.git' });
    assert.deepEqual([bad.status, bad.json.code], [400, 'bad_request']);
    const saved = await ok('PUT', '/sync/config', { enabled: true, repository: remote.url, branch: 'main', auth: { type: 'token', token: remote.token }, commit: { authorName: 'Trellis Bot', authorEmail: 'bot@example.com' } });
    assert.deepEqual([saved.enabled, saved.repository, saved.pushEnabled, saved.auth], [true, remote.url, true, { type: 'token' }]);
    assert.ok(!JSON.stringify(await ok('GET', '/sync/config')).includes(remote.token));
    const rows = await t.coordinator.db.query<Json>('SELECT * FROM sync_config');
    assert.ok(!JSON.stringify(rows).includes(remote.token) && !Buffer.from(rows[0]!.token_ciphertext as Uint8Array).toString('utf8').includes(remote.token), 'the token is stored sealed');
    assert.deepEqual(await ok('POST', '/sync/test-connection'), { success: true, message: `connected to ${remote.url} (branch main)` });
  });

  test('a wrong token: a clear error from pull and test-connection, and nothing changed', async () => {
    await ok('PUT', '/sync/config', { auth: { type: 'token', token: 'wrong-token' } });
    const refusedBefore = remote.refused;
    const pulled = await ok('POST', '/sync/pull');
    assert.equal(pulled.success, false);
    assert.match(String(pulled.message), /refused the credentials \(HTTP 401\)/);
    const probe = await ok('POST', '/sync/test-connection');
    assert.equal(probe.success, false);
    assert.match(String(probe.message), /credentials/);
    assert.ok(remote.refused > refusedBefore);
    assert.equal(await spec('hello'), undefined);
    assert.equal((await ok('GET', '/sync/status')).lastSyncCommit, '');
    await ok('PUT', '/sync/config', { auth: { type: 'token', token: remote.token } });
  });

  test('pull brings new DAGs and documents; local items are untracked; other files are skipped', async () => {
    const pulled = await ok('POST', '/sync/pull');
    assert.equal(pulled.success, true, JSON.stringify(pulled));
    assert.deepEqual([...(pulled.synced as string[])].sort(), ['docs/runbooks/start', 'hello']);
    assert.equal(await spec('hello'), HELLO);
    assert.equal((await ok('GET', '/docs/doc?path=runbooks%2Fstart')).title, 'Starting up');
    const status = await ok('GET', '/sync/status');
    assert.equal(status.lastSyncCommit, other.git('ls-remote', 'origin', 'main').split('\t')[0]);
    assert.deepEqual(status.counts, { synced: 2, modified: 0, untracked: 1, conflict: 0, missing: 0 });
    const items = status.items as Json[];
    assert.deepEqual(items.find((i) => i.itemId === 'docs/runbooks/start'), { itemId: 'docs/runbooks/start', filePath: 'docs/runbooks/start.md', displayName: 'runbooks/start', kind: 'doc', status: 'synced' });
    assert.equal(items.find((i) => i.itemId === 'local-only')?.status, 'untracked');
  });

  test('pull brings changed and new DAGs pushed by someone else', async () => {
    other.read('hello.yaml');
    other.write('hello.yaml', HELLO.replace('hello', 'hello again'));
    other.write('second.yaml', 'steps:\n  - name: b\n    command: echo two\n');
    other.commitAndPush('change hello, add second');
    const pulled = await ok('POST', '/sync/pull');
    assert.deepEqual([...(pulled.synced as string[])].sort(), ['docs/runbooks/start', 'hello', 'second']);
    assert.equal(await spec('hello'), HELLO.replace('hello', 'hello again'));
    assert.equal(await spec('second'), 'steps:\n  - name: b\n    command: echo two\n');
  });

  test('a run of a definition that came from sync records its git commit; a local one records none', async () => {
    const commit = String((await ok('GET', '/sync/status')).lastSyncCommit);
    const started = await ok('POST', '/dags/second/start', {});
    const run = await t.waitForRunStatus('second', String(started.dagRunId), [4]);
    assert.equal(run.gitCommit, commit);
    const local = await ok('POST', '/dags/local-only/start', {});
    assert.equal((await t.waitForRunStatus('local-only', String(local.dagRunId), [4])).gitCommit, '');
  });

  test('publish: a changed DAG and an untracked one reach the repository, seen by another clone', async () => {
    const changed = 'steps:\n  - name: greet\n    command: echo published\n';
    await ok('PUT', '/dags/hello/spec', { spec: changed });
    assert.equal(await statusOf('hello'), 'modified');
    const published = await ok('POST', `${item('hello')}/publish`, { message: 'publish hello' });
    assert.deepEqual([published.success, published.synced], [true, ['hello']]);
    assert.equal(await statusOf('hello'), 'synced');
    assert.equal(other.read('hello.yaml'), changed.trimEnd());
    assert.equal(other.git('log', '-1', '--format=%an <%ae>|%s'), 'Trellis Bot <bot@example.com>|publish hello');
    const all = await ok('POST', '/sync/publish-all', { message: 'add local' });
    assert.deepEqual([all.success, all.synced], [true, ['local-only']]);
    assert.equal(other.read('local-only.yaml'), 'steps:\n  - name: a\n    command: echo local');
  });

  test('a conflict: both sides changed; publish answers 409 with the remote commit, author and message; force publishes', async () => {
    other.write('hello.yaml', 'steps:\n  - name: greet\n    command: echo theirs\n');
    const theirs = other.commitAndPush('remote tweak', 'Ada Remote <ada@example.com>');
    await ok('PUT', '/dags/hello/spec', { spec: 'steps:\n  - name: greet\n    command: echo ours\n' });
    const pulled = await ok('POST', '/sync/pull');
    assert.deepEqual(pulled.conflicts, ['hello']);
    assert.equal(await spec('hello'), 'steps:\n  - name: greet\n    command: echo ours\n', 'a conflict leaves the local copy alone');
    assert.equal(await statusOf('hello'), 'conflict');
    const diff = await ok('GET', `${item('hello')}/diff`);
    assert.deepEqual([diff.status, diff.localContent, diff.remoteContent], ['conflict', 'steps:\n  - name: greet\n    command: echo ours\n', 'steps:\n  - name: greet\n    command: echo theirs\n']);
    const refused = await t.call('POST', `${item('hello')}/publish`, { message: 'ours' });
    assert.equal(refused.status, 409);
    assert.deepEqual([refused.json.itemId, refused.json.remoteCommit, refused.json.remoteAuthor, refused.json.remoteMessage], ['hello', theirs, 'Ada Remote <ada@example.com>', 'remote tweak']);
    assert.equal(typeof refused.json.message, 'string');
    assert.equal(other.read('hello.yaml'), 'steps:\n  - name: greet\n    command: echo theirs', 'nothing was pushed');
    const forced = await ok('POST', `${item('hello')}/publish`, { message: 'ours wins', force: true });
    assert.equal(forced.success, true);
    assert.equal(other.read('hello.yaml'), 'steps:\n  - name: greet\n    command: echo ours');
    assert.equal(await statusOf('hello'), 'synced');
  });

  test('diff and discard of a document (item id with URL-encoded slashes); 404 for unknown items, 400 for invalid ids', async () => {
    await ok('PATCH', '/docs/doc?path=runbooks%2Fstart', { content: '# local edit\n' });
    assert.equal(await statusOf('docs/runbooks/start'), 'modified');
    const diff = await ok('GET', `${item('docs/runbooks/start')}/diff`);
    assert.deepEqual([diff.filePath, diff.localContent, diff.remoteContent], ['docs/runbooks/start.md', '# local edit\n', RUNBOOK]);
    await ok('POST', `${item('docs/runbooks/start')}/discard`);
    assert.equal((await ok('GET', '/docs/doc?path=runbooks%2Fstart')).content, RUNBOOK);
    assert.equal(await statusOf('docs/runbooks/start'), 'synced');
    assert.equal((await t.call('GET', `${item('nothing-here')}/diff`)).status, 404);
    assert.equal((await t.call('POST', `${item('docs/nothing')}/discard`)).status, 404);
    assert.equal((await t.call('POST', `${item('../etc')}/publish`, {})).status, 400);
  });

  test('move renames here and in the repository; a move across kinds is a 400', async () => {
    const moved = await ok('POST', `${item('second')}/move`, { newItemId: 'second-renamed', message: 'rename second' });
    assert.equal(typeof moved.message, 'string');
    assert.equal(await spec('second'), undefined);
    assert.equal(await spec('second-renamed'), 'steps:\n  - name: b\n    command: echo two\n');
    assert.equal(other.read('second.yaml'), undefined);
    assert.equal(other.read('second-renamed.yaml'), 'steps:\n  - name: b\n    command: echo two');
    assert.equal(await statusOf('second-renamed'), 'synced');
    assert.equal((await t.call('POST', `${item('second-renamed')}/move`, { newItemId: 'docs/second' })).status, 400);
    assert.equal((await t.call('POST', `${item('no-such')}/move`, { newItemId: 'other' })).status, 404);
  });

  test('delete removes an item from the repository, here and from the state; an untracked one is a 400', async () => {
    await ok('POST', `${item('second-renamed')}/delete`, { message: 'drop it' });
    assert.equal(await spec('second-renamed'), undefined);
    assert.equal(other.read('second-renamed.yaml'), undefined);
    assert.equal(await statusOf('second-renamed'), undefined);
    await ok('POST', '/dags', { name: 'scratch' }, 201);
    assert.equal(await statusOf('scratch'), 'untracked');
    assert.equal((await t.call('POST', `${item('scratch')}/delete`, {})).status, 400);
    await ok('PUT', '/dags/local-only/spec', { spec: 'steps:\n  - name: a\n    command: echo changed\n' });
    assert.equal((await t.call('POST', `${item('local-only')}/delete`, {})).status, 400, 'modified without force');
  });

  test('forget, delete-missing and cleanup', async () => {
    assert.equal((await t.call('POST', `${item('local-only')}/forget`)).status, 400, 'modified');
    assert.equal((await t.call('POST', `${item('hello')}/forget`)).status, 400, 'synced');
    await ok('POST', `${item('scratch')}/forget`);
    await ok('DELETE', '/dags/hello', undefined, 204);
    assert.equal(await statusOf('hello'), 'missing');
    await ok('POST', `${item('hello')}/forget`);
    assert.equal(await statusOf('hello'), undefined);
    await ok('POST', '/sync/pull');
    assert.equal(await statusOf('hello'), 'synced', 'a forgotten item comes back with the next pull');
    await ok('DELETE', '/dags/hello', undefined, 204);
    const removed = await ok('POST', '/sync/delete-missing', { message: 'clean up' });
    assert.deepEqual(removed.deleted, ['hello']);
    assert.equal(other.read('hello.yaml'), undefined);
    await ok('DELETE', '/docs/doc?path=runbooks%2Fstart', undefined, 204);
    assert.equal(await statusOf('docs/runbooks/start'), 'missing');
    const cleaned = await ok('POST', '/sync/cleanup');
    assert.deepEqual(cleaned.forgotten, ['docs/runbooks/start']);
    assert.equal(other.read('docs/runbooks/start.md'), RUNBOOK.trimEnd(), 'cleanup touches only the state');
  });

  test('a remote that goes away mid-pull: the pull fails and nothing is half-written', async () => {
    other.write('first.yaml', 'steps:\n  - name: one\n    command: echo 1\n');
    other.write('local-only.yaml', 'steps:\n  - name: a\n    command: echo remote\n');
    other.write('docs/new.md', '# new\n');
    other.commitAndPush('three changes');
    const before = await ok('GET', '/sync/status');
    remote.breakUploads = true;
    try {
      const pulled = await ok('POST', '/sync/pull');
      assert.equal(pulled.success, false);
      assert.match(String(pulled.message), /could not be reached|repository/);
    } finally {
      remote.breakUploads = false;
    }
    assert.equal(await spec('first'), undefined);
    assert.equal((await t.call('GET', '/docs/doc?path=new')).status, 404);
    const after = await ok('GET', '/sync/status');
    assert.deepEqual([after.lastSyncCommit, after.counts], [before.lastSyncCommit, before.counts]);
    const pulled = await ok('POST', '/sync/pull');
    assert.equal(pulled.success, true);
    assert.equal(await spec('first'), 'steps:\n  - name: one\n    command: echo 1\n');
  });

  test('read-only mode: API writes to DAGs and documents are refused with 403; pushing steps with 400; pull still works', async () => {
    await ok('PUT', '/sync/config', { pushEnabled: false });
    for (const [method, path, body] of [
      ['PUT', '/dags/first/spec', { spec: HELLO }],
      ['POST', '/dags', { name: 'brand-new' }],
      ['DELETE', '/dags/first', undefined],
      ['POST', '/dags/first/rename', { newFileName: 'elsewhere' }],
      ['POST', '/docs', { id: 'blocked', content: 'x' }],
      ['PATCH', '/docs/doc?path=new', { content: 'x' }],
    ] as const) {
      const refused = await t.call(method, path, body);
      assert.deepEqual([refused.status, refused.json.code], [403, 'forbidden'], `${method} ${path}`);
      assert.match(String(refused.json.message), /read-only mode \(pushEnabled: false\)/);
    }
    assert.equal((await t.call('POST', '/sync/publish-all', {})).status, 400);
    assert.equal((await t.call('POST', '/sync/delete-missing', {})).status, 400);
    assert.equal((await t.call('POST', `${item('first')}/delete`, {})).status, 400);
    assert.equal((await ok('POST', '/sync/pull')).success, true);
    await ok('PUT', '/sync/config', { pushEnabled: true });
    await ok('POST', '/docs', { id: 'allowed', content: 'x' }, 201);
    const audit = await t.coordinator.db.query<{ type: string }>("SELECT type FROM event_logs WHERE kind = 'audit' AND type LIKE 'doc.%' ORDER BY id");
    assert.deepEqual(audit.map((r) => r.type), ['doc.updated', 'doc.deleted', 'doc.created'], 'document writes are audited');
  });

  test('auto-sync pulls a push within its interval', async () => {
    await ok('PUT', '/sync/config', { autoSync: { enabled: true, interval: 1 } });
    other.write('auto.yaml', 'steps:\n  - name: auto\n    command: echo auto\n');
    other.commitAndPush('for auto-sync');
    const started = Date.now();
    while ((await spec('auto')) === undefined) {
      assert.ok(Date.now() - started < 20_000, 'auto-sync did not pull within 20 s');
      await new Promise((r) => setTimeout(r, 100));
    }
    await ok('PUT', '/sync/config', { autoSync: { enabled: false } });
  });

  test('an API edit landing between a pull\'s plan and its write is kept; the item shows in conflict and the pull reports it', async () => {
    const ours = 'steps:\n  - name: one\n    command: echo ours\n';
    const theirs = 'steps:\n  - name: one\n    command: echo theirs\n';
    const alongside = 'steps:\n  - name: b\n    command: echo alongside\n';
    assert.equal(await statusOf('first'), 'synced');
    other.read('first.yaml');
    other.write('first.yaml', theirs);
    other.write('alongside.yaml', alongside);
    other.commitAndPush('change first, add alongside');
    inPullWindow = async () => {
      await ok('PUT', '/dags/first/spec', { spec: ours });
    };
    const pulled = await ok('POST', '/sync/pull');
    assert.equal(inPullWindow, undefined, 'the pull went through its window');
    assert.deepEqual([pulled.success, (pulled.conflicts as string[]).includes('first'), (pulled.synced as string[]).includes('alongside')], [true, true, true], JSON.stringify(pulled));
    assert.equal(await spec('first'), ours, 'the API edit was not overwritten');
    assert.equal(await spec('alongside'), alongside);
    assert.equal(await statusOf('first'), 'conflict');
    const diff = await ok('GET', `${item('first')}/diff`);
    assert.deepEqual([diff.localContent, diff.remoteContent], [ours, theirs]);
  });

  test('a diff answers while a pull holds the sync lock', async () => {
    let diff: { status: number; json: Json } | undefined;
    inPullWindow = async () => {
      const answered = t.call('GET', `${item('first')}/diff`);
      const deadline = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 10_000).unref());
      diff = await Promise.race([answered, deadline]);
    };
    await ok('POST', '/sync/pull');
    assert.equal(diff?.status, 200, 'the diff waited for the pull (or failed)');
    assert.equal(diff?.json.remoteContent, 'steps:\n  - name: one\n    command: echo theirs\n');
  });

  test('an unreachable repository: 503 service_unavailable naming its host, never the token; nothing changed', async () => {
    const before = await ok('GET', '/sync/status');
    await ok('PUT', '/sync/config', { repository: 'http://127.0.0.1:1/repo.git' });
    try {
      for (const [path, body] of [[`${item('first')}/discard`, undefined], [`${item('first')}/delete`, { force: true }], ['/sync/delete-missing', {}], [`${item('first')}/move`, { newItemId: 'moved' }]] as const) {
        const answer = await t.call('POST', path, body);
        assert.deepEqual([answer.status, answer.json.code], [503, 'service_unavailable'], `${path}: ${JSON.stringify(answer.json)}`);
        assert.match(String(answer.json.message), /the repository at 127\.0\.0\.1:1 could not be reached/);
        assert.ok(!JSON.stringify(answer.json).includes(remote.token), 'the token is not in the answer');
      }
    } finally {
      await ok('PUT', '/sync/config', { repository: remote.url });
    }
    assert.equal(await spec('first'), 'steps:\n  - name: one\n    command: echo ours\n');
    assert.deepEqual((await ok('GET', '/sync/status')).counts, before.counts);
  });
});
