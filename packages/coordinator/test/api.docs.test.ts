// The /docs endpoints over HTTP on one coordinator (PGlite, or PostgreSQL with
// TRELLIS_TEST_DATABASE_URL): the contract's answers and errors, tree and flat listings with
// paging, emptied parent directories removed, documents a run writes under DAG_DOCS_DIR listed,
// and every path traversal attempt (`..`, encoded, absolute, symbolic links out of the docs
// directory) refused with 400 without touching anything.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DocFiles } from '@trellis/coordinator';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';

let t: TestCoordinator;
let docsDir: string;
let outside: string;

const q = (path: string): string => `?path=${encodeURIComponent(path)}`;

async function within(ms: number, what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > ms) assert.fail(`${what} did not happen within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function flatIds(): Promise<string[]> {
  const answer = await t.call('GET', '/docs?flat=true&perPage=1000');
  assert.equal(answer.status, 200, JSON.stringify(answer.json));
  return (answer.json.items as Array<{ id: string }>).map((item) => item.id);
}

async function create(id: string, content: string): Promise<void> {
  const answer = await t.call('POST', '/docs', { id, content });
  assert.equal(answer.status, 201, JSON.stringify(answer.json));
}

async function remove(id: string): Promise<void> {
  assert.equal((await t.call('DELETE', `/docs/doc${q(id)}`)).status, 204);
}

before(async () => {
  outside = mkdtempSync(join(tmpdir(), 'trellis-outside-'));
  t = await startTestCoordinator('api_docs', { 'nightly-report': 'steps:\n  - name: write\n    command: \'mkdir -p "$DAG_DOCS_DIR" && printf -- "---\\ntitle: Nightly\\n---\\nall green\\n" > "$DAG_DOCS_DIR/summary.md"\'\n' }, {}, { watch: true });
  docsDir = join(t.dir, 'data', 'docs');
});

after(async () => {
  await t.stop();
  rmSync(outside, { recursive: true, force: true });
});

describe('/docs', () => {
  test('create, read, update: 201 {message}, the document with its frontmatter title, 409 on an existing id, 404 on a missing one', async () => {
    const created = await t.call('POST', '/docs', { id: 'runbooks/deploy', content: '---\ntitle: "Deploying: the steps"\n---\n# Deploy\n' });
    assert.equal(created.status, 201);
    assert.equal(typeof created.json.message, 'string');
    const read = await t.call('GET', `/docs/doc${q('runbooks/deploy')}`);
    assert.equal(read.status, 200);
    assert.deepEqual([read.json.id, read.json.title, read.json.content], ['runbooks/deploy', 'Deploying: the steps', '---\ntitle: "Deploying: the steps"\n---\n# Deploy\n']);
    assert.ok(Date.parse(String(read.json.createdAt)) <= Date.parse(String(read.json.updatedAt)));
    const again = await t.call('POST', '/docs', { id: 'runbooks/deploy', content: 'other' });
    assert.deepEqual([again.status, again.json.code], [409, 'already_exists']);
    const updated = await t.call('PATCH', `/docs/doc${q('runbooks/deploy')}`, { content: '# Deploy, revised\n' });
    assert.equal(updated.status, 200);
    assert.deepEqual([updated.json.title, updated.json.content], ['deploy', '# Deploy, revised\n']);
    await within(10_000, 'the docs directory has the update', () => existsSync(join(docsDir, 'runbooks', 'deploy.md')) && readFileSync(join(docsDir, 'runbooks', 'deploy.md'), 'utf8') === '# Deploy, revised\n');
    for (const [method, path, body] of [
      ['GET', `/docs/doc${q('no/such')}`, undefined],
      ['PATCH', `/docs/doc${q('no/such')}`, { content: 'x' }],
      ['DELETE', `/docs/doc${q('no/such')}`, undefined],
      ['POST', `/docs/doc/rename${q('no/such')}`, { newPath: 'elsewhere' }],
    ] as const) {
      const missing = await t.call(method, path, body);
      assert.deepEqual([missing.status, missing.json.code], [404, 'not_found'], `${method} ${path}`);
    }
    await remove('runbooks/deploy');
  });

  test('bad requests: missing fields, a missing path, an id of 257 characters, bad paging', async () => {
    for (const [method, path, body] of [
      ['POST', '/docs', { content: 'x' }],
      ['POST', '/docs', { id: 'x' }],
      ['POST', '/docs', { id: 'x'.repeat(257), content: 'x' }],
      ['GET', '/docs/doc', undefined],
      ['PATCH', `/docs/doc${q('x')}`, {}],
      ['POST', `/docs/doc/rename${q('x')}`, {}],
      ['GET', '/docs?perPage=0', undefined],
      ['GET', '/docs?perPage=1001', undefined],
      ['GET', '/docs?page=0', undefined],
      ['GET', '/docs?flat=yes', undefined],
    ] as const) {
      const answer = await t.call(method, path, body);
      assert.deepEqual([answer.status, answer.json.code], [400, 'bad_request'], `${method} ${path} ${JSON.stringify(body)}`);
    }
    const longest = `${'x'.repeat(128)}/${'y'.repeat(127)}`;
    assert.equal((await t.call('POST', '/docs', { id: longest, content: 'x' })).status, 201);
    await remove(longest);
  });

  test('rename: 200 with the document at its new path, 409 onto an existing id, the old path\'s emptied parent directories removed', async () => {
    await create('guides/release/deploy', 'steps\n');
    await create('taken', 'here\n');
    const clash = await t.call('POST', `/docs/doc/rename${q('guides/release/deploy')}`, { newPath: 'taken' });
    assert.deepEqual([clash.status, clash.json.code], [409, 'already_exists']);
    await within(10_000, 'the file is written', () => existsSync(join(docsDir, 'guides', 'release', 'deploy.md')));
    const moved = await t.call('POST', `/docs/doc/rename${q('guides/release/deploy')}`, { newPath: 'archive/deploy' });
    assert.equal(moved.status, 200, JSON.stringify(moved.json));
    assert.deepEqual([moved.json.id, moved.json.content], ['archive/deploy', 'steps\n']);
    assert.equal((await t.call('GET', `/docs/doc${q('guides/release/deploy')}`)).status, 404);
    await within(10_000, 'the old directories are gone and the new file is there', () => !existsSync(join(docsDir, 'guides')) && existsSync(join(docsDir, 'archive', 'deploy.md')));
    await remove('archive/deploy');
    await within(10_000, 'the emptied directory of a deleted document is gone', () => !existsSync(join(docsDir, 'archive')));
    await remove('taken');
    assert.deepEqual(await flatIds(), []);
  });

  test('listings: flat {items, pagination} sorted by id; the tree with directories first, paged by its top-level nodes', async () => {
    for (const id of ['zeta', 'alpha', 'ops/db/restore', 'ops/db/backup', 'ops/index', 'notes 2.1']) await create(id, id === 'ops/index' ? '---\ntitle: Operations\n---\n' : 'text\n');
    const flat = await t.call('GET', '/docs?flat=true&perPage=4&page=2');
    assert.equal(flat.status, 200);
    assert.deepEqual(flat.json.items, [{ id: 'ops/index', title: 'Operations' }, { id: 'zeta', title: 'zeta' }]);
    assert.deepEqual(flat.json.pagination, { totalRecords: 6, currentPage: 2, totalPages: 2, nextPage: null, prevPage: 1 });
    assert.deepEqual(await flatIds(), ['alpha', 'notes 2.1', 'ops/db/backup', 'ops/db/restore', 'ops/index', 'zeta']);
    const tree = await t.call('GET', '/docs');
    assert.equal(tree.status, 200);
    assert.deepEqual(tree.json.tree, [
      {
        id: 'ops', name: 'ops', type: 'directory', children: [
          { id: 'ops/db', name: 'db', type: 'directory', children: [
            { id: 'ops/db/backup', name: 'backup', type: 'file', title: 'backup' },
            { id: 'ops/db/restore', name: 'restore', type: 'file', title: 'restore' },
          ] },
          { id: 'ops/index', name: 'index', type: 'file', title: 'Operations' },
        ],
      },
      { id: 'alpha', name: 'alpha', type: 'file', title: 'alpha' },
      { id: 'notes 2.1', name: 'notes 2.1', type: 'file', title: 'notes 2.1' },
      { id: 'zeta', name: 'zeta', type: 'file', title: 'zeta' },
    ]);
    assert.deepEqual(tree.json.pagination, { totalRecords: 4, currentPage: 1, totalPages: 1, nextPage: null, prevPage: null });
    const second = await t.call('GET', '/docs?flat=false&perPage=3&page=2');
    assert.deepEqual([second.json.tree, (second.json.pagination as { prevPage: number }).prevPage], [[{ id: 'zeta', name: 'zeta', type: 'file', title: 'zeta' }], 1]);
    for (const id of ['zeta', 'alpha', 'ops/db/restore', 'ops/db/backup', 'ops/index', 'notes 2.1']) await remove(id);
  });

  test('path traversal: `..`, encoded `%2e%2e`, absolute paths and symbolic links out of the docs directory all answer 400 and touch nothing', async () => {
    writeFileSync(join(outside, 'secret.md'), 'outside\n');
    await create('inside', 'in\n');
    await within(10_000, 'the docs directory exists with the document', () => existsSync(join(docsDir, 'inside.md')));
    symlinkSync(outside, join(docsDir, 'link'));
    symlinkSync(join(outside, 'secret.md'), join(docsDir, 'leak.md'));
    symlinkSync(join(outside, 'nowhere'), join(docsDir, 'dangling'));
    const attempts = ['../secret', 'a/../../secret', '..', '/etc/passwd', `${outside}/secret`, './inside', 'link/secret', 'link/new', 'leak', 'dangling/new', 'a\\..\\b'];
    const answers: Array<[string, string, number, unknown]> = [];
    for (const path of attempts) {
      for (const [method, url, body] of [
        ['GET', `/docs/doc${q(path)}`, undefined],
        ['PATCH', `/docs/doc${q(path)}`, { content: 'overwritten' }],
        ['DELETE', `/docs/doc${q(path)}`, undefined],
        ['POST', `/docs/doc/rename${q(path)}`, { newPath: 'moved' }],
        ['POST', `/docs/doc/rename${q('inside')}`, { newPath: path }],
        ['POST', '/docs', { id: path, content: 'created' }],
      ] as const) {
        const answer = await t.call(method, url, body);
        answers.push([method, url, answer.status, answer.json.code]);
      }
    }
    // Encoded in the URL: the query decodes to `..` segments.
    for (const url of ['/docs/doc?path=%2e%2e%2fsecret', '/docs/doc?path=%2E%2E/%2E%2E/etc/passwd', '/docs/doc?path=link%2Fsecret']) {
      const answer = await t.call('GET', url);
      answers.push(['GET', url, answer.status, answer.json.code]);
    }
    assert.deepEqual(answers.filter(([, , status, code]) => status !== 400 || code !== 'bad_request'), []);
    assert.deepEqual(readdirSync(outside), ['secret.md']);
    assert.equal(readFileSync(join(outside, 'secret.md'), 'utf8'), 'outside\n');
    assert.equal((await t.call('GET', `/docs/doc${q('inside')}`)).json.content, 'in\n');
    assert.deepEqual(await flatIds(), ['inside']);
    // The directory walk does not follow the link out either, nor read the linked file.
    const files = new DocFiles(docsDir);
    assert.deepEqual(await files.list(), ['inside', 'leak']);
    assert.equal(await files.read('leak'), undefined);
    await assert.rejects(files.write('link/secret', 'x', () => true), /outside the docs directory/);
    await assert.rejects(files.remove('link/secret'), /outside the docs directory/);
    assert.equal(readFileSync(join(outside, 'secret.md'), 'utf8'), 'outside\n');
    for (const name of ['link', 'leak.md', 'dangling']) rmSync(join(docsDir, name));
    await remove('inside');
  });

  test('a document a run writes under DAG_DOCS_DIR (<docsDir>/<dag name>/) is listed and read; files that are not documents are skipped', async () => {
    const started = await t.call('POST', '/dags/nightly-report/start', { dagRunId: 'docs-run' });
    assert.equal(started.status, 200, JSON.stringify(started.json));
    await t.waitForRunStatus('nightly-report', 'docs-run', [4]);
    mkdirSync(join(docsDir, 'by-hand'), { recursive: true });
    writeFileSync(join(docsDir, 'by-hand', '_draft.md'), 'not a document id');
    writeFileSync(join(docsDir, 'by-hand', 'data.json'), '{}');
    writeFileSync(join(docsDir, 'by-hand', 'kept.md'), 'a document\n');
    await within(15_000, 'the run\'s document and the hand-written one are listed', async () => {
      const ids = await flatIds();
      return ids.includes('nightly-report/summary') && ids.includes('by-hand/kept');
    });
    const read = await t.call('GET', `/docs/doc${q('nightly-report/summary')}`);
    assert.deepEqual([read.status, read.json.title, read.json.content], [200, 'Nightly', '---\ntitle: Nightly\n---\nall green\n']);
    assert.deepEqual(await flatIds(), ['by-hand/kept', 'nightly-report/summary']);
  });
});
