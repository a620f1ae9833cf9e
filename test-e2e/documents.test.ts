// Documents on two coordinators that share nothing but PostgreSQL (separate processes, data and
// docs directories): created, updated, renamed and deleted through A, read through B within
// 1 s; after A is killed (-9) and its directories deleted, as if its host were gone, every
// document is still read through B.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { callAt, Cluster, type Answer, type Peer } from './support/cluster.js';

/** The bound for a change made on one coordinator to be read on another. */
const PROPAGATION_MS = 1000;

const cluster = new Cluster({ dags: {} });
let b: Peer;

const onA = (method: string, path: string, body?: unknown): Promise<Answer> => cluster.call(method, path, body);
const onB = (method: string, path: string, body?: unknown): Promise<Answer> => callAt(b.api, method, path, body);
const doc = (id: string): string => `/docs/doc?path=${encodeURIComponent(id)}`;

/** Polls B until `check` holds; the time it took, failing past the bound. */
async function onBWithin(what: string, check: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > PROPAGATION_MS) assert.fail(`B: ${what} not within ${PROPAGATION_MS} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return Date.now() - started;
}

async function flatOnB(): Promise<string[]> {
  return ((await onB('GET', '/docs?flat=true&perPage=1000')).json.items as Array<{ id: string }>).map((item) => item.id);
}

before(async () => {
  await cluster.start();
  b = await cluster.startPeer('b');
});

after(async () => {
  await cluster.stop();
});

describe('documents on two coordinators sharing one PostgreSQL database', () => {
  test('create, update, rename and delete on A are read on B within 1 s', async (t) => {
    const created = await onA('POST', '/docs', { id: 'runbooks/deploy', content: '---\ntitle: Deploy\n---\nstep one\n' });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    const afterCreate = await onBWithin('lists the new document', async () => (await flatOnB()).includes('runbooks/deploy'));
    const read = await onB('GET', doc('runbooks/deploy'));
    assert.deepEqual([read.status, read.json.title, read.json.content], [200, 'Deploy', '---\ntitle: Deploy\n---\nstep one\n']);

    assert.equal((await onA('PATCH', doc('runbooks/deploy'), { content: '---\ntitle: Deploy v2\n---\nstep two\n' })).status, 200);
    const afterUpdate = await onBWithin('reads the update', async () => (await onB('GET', doc('runbooks/deploy'))).json.content === '---\ntitle: Deploy v2\n---\nstep two\n');

    const renamed = await onA('POST', `/docs/doc/rename?path=${encodeURIComponent('runbooks/deploy')}`, { newPath: 'guides/deploy' });
    assert.equal(renamed.status, 200, JSON.stringify(renamed.json));
    const afterRename = await onBWithin('follows the rename', async () => (await onB('GET', doc('guides/deploy'))).status === 200 && (await onB('GET', doc('runbooks/deploy'))).status === 404);
    // B's own docs directory follows too, emptied parent directories removed.
    await onBWithin('mirrors the rename to its directory', () => Promise.resolve(existsSync(join(b.dir, 'data', 'docs', 'guides', 'deploy.md')) && !existsSync(join(b.dir, 'data', 'docs', 'runbooks'))));

    assert.equal((await onA('POST', '/docs', { id: 'scratch', content: 'temporary\n' })).status, 201);
    await onBWithin('lists the scratch document', async () => (await flatOnB()).includes('scratch'));
    assert.equal((await onA('DELETE', doc('scratch'))).status, 204);
    const afterDelete = await onBWithin('forgets the deleted document', async () => (await onB('GET', doc('scratch'))).status === 404);
    assert.deepEqual(await flatOnB(), ['guides/deploy']);
    t.diagnostic(`seen on B after: create ${afterCreate} ms, update ${afterUpdate} ms, rename ${afterRename} ms, delete ${afterDelete} ms`);
  });

  test('a create racing on A and B gives one 201 and one 409', async () => {
    const answers = await Promise.all([onA('POST', '/docs', { id: 'race', content: 'a' }), onB('POST', '/docs', { id: 'race', content: 'b' })]);
    assert.deepEqual(answers.map((a) => a.status).sort(), [201, 409]);
    assert.equal(answers.find((a) => a.status === 409)?.json.code, 'already_exists');
  });

  test('A killed (-9) and its directories deleted: every document is still read through B', async () => {
    for (const id of ['ops/oncall', 'ops/db/restore']) assert.equal((await onA('POST', '/docs', { id, content: `# ${id}\n` })).status, 201);
    await cluster.killCoordinator();
    for (const name of ['data', 'dags']) rmSync(join(cluster.dir, name), { recursive: true, force: true });
    await onBWithin('lists every document', async () => (await flatOnB()).join() === 'guides/deploy,ops/db/restore,ops/oncall,race');
    for (const id of ['ops/oncall', 'ops/db/restore']) {
      const read = await onB('GET', doc(id));
      assert.deepEqual([read.status, read.json.content], [200, `# ${id}\n`]);
    }
    assert.equal((await onB('GET', doc('guides/deploy'))).json.title, 'Deploy v2');
    const tree = await onB('GET', '/docs');
    assert.deepEqual((tree.json.tree as Array<{ id: string }>).map((node) => node.id), ['guides', 'ops', 'race']);
  });
});
