// Documents stored in the database and mirrored to each coordinator's docs directory: two
// DocumentStores with separate directories on one database (PGlite: one handle; PostgreSQL with
// TRELLIS_TEST_DATABASE_URL: two pools).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AlreadyExistsError, BadRequestError, NotFoundError } from '@trellis/core';
import { openTestDb } from '@trellis/store/testing';
import type { Db } from '@trellis/store';
import { createSilentLogger, DirectoryMirror, DocFiles, DocumentStore, StoredFileCaches, type Actor, type DocumentSummary } from '@trellis/coordinator';

interface Side {
  dir: string;
  docs: DocumentStore;
  changes: Array<[string, DocumentSummary | undefined]>;
  stop: () => Promise<void>;
}

/** What a change may take to reach the other coordinator (the bound). */
const PROPAGATION_MS = 1000;
const IMPORT_MS = 2000;

const alice: Actor = { kind: 'user', id: 'alice', name: 'alice' };
const bob: Actor = { kind: 'user', id: 'bob', name: 'bob' };
let root: string;
let cleanup: () => Promise<void>;
let a: Side;
let b: Side;

async function openSide(db: Db, name: string): Promise<Side> {
  const dir = join(root, name);
  const logger = createSilentLogger();
  const caches = new StoredFileCaches(db, logger, `instance-${name}`);
  await caches.start();
  const mirror = new DirectoryMirror(db, caches.doc, new DocFiles(dir), logger, `directory ${dir}`);
  await mirror.start({ watch: true });
  const docs = new DocumentStore(caches.doc);
  const changes: Side['changes'] = [];
  docs.onChange((id, doc) => changes.push([id, doc]));
  return {
    dir,
    docs,
    changes,
    stop: async () => {
      await mirror.stop();
      await caches.stop();
    },
  };
}

async function within(ms: number, what: string, check: () => boolean): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > ms) assert.fail(`${what} did not happen within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const ids = (side: Side) => side.docs.list().map((d) => d.id);

before(async () => {
  root = mkdtempSync(join(tmpdir(), 'trellis-docs-'));
  const opened = await openTestDb('documents_store');
  cleanup = opened.cleanup;
  a = await openSide(opened.db, 'a');
  b = await openSide(opened.second !== undefined ? await opened.second() : opened.db, 'b');
});

after(async () => {
  await Promise.all([a.stop(), b.stop()]);
  await cleanup();
  rmSync(root, { recursive: true, force: true });
});

describe('documents shared through the database', () => {
  test('a document created on A is listed and read on B, and written into B\'s directory, within 1 s', async () => {
    const created = await a.docs.create(alice, 'runbooks/deploy', '---\ntitle: "Deploying: the steps"\n---\n# Deploy\n');
    assert.equal(created.title, 'Deploying: the steps');
    await within(PROPAGATION_MS, 'B lists the document', () => ids(b).includes('runbooks/deploy'));
    assert.deepEqual(b.changes.at(-1), ['runbooks/deploy', { id: 'runbooks/deploy', title: 'Deploying: the steps' }]);
    const read = await b.docs.get('runbooks/deploy');
    assert.equal(read.content, '---\ntitle: "Deploying: the steps"\n---\n# Deploy\n');
    assert.ok(Date.parse(read.createdAt) <= Date.parse(read.updatedAt));
    await within(PROPAGATION_MS, 'B\'s file', () => existsSync(join(b.dir, 'runbooks', 'deploy.md')));
    assert.equal(readFileSync(join(b.dir, 'runbooks', 'deploy.md'), 'utf8'), read.content);
  });

  test('without a frontmatter title the title is the id\'s last segment; the list is sorted by id', async () => {
    await b.docs.create(bob, 'zeta', 'plain\n');
    await b.docs.create(bob, 'alpha/notes v1.2', '---\nother: x\n---\ntext\n');
    assert.equal((await a.docs.get('alpha/notes v1.2')).title, 'notes v1.2');
    await within(PROPAGATION_MS, 'A lists both', () => ids(a).includes('zeta') && ids(a).includes('alpha/notes v1.2'));
    assert.deepEqual(ids(a), [...ids(a)].sort());
  });

  test('the contract\'s errors: 409 on a taken id, 404 on a missing one, 400 on an id outside the rule (no path escapes)', async () => {
    await assert.rejects(b.docs.create(bob, 'runbooks/deploy', 'again'), AlreadyExistsError);
    await assert.rejects(a.docs.get('nothing/here'), NotFoundError);
    await assert.rejects(a.docs.update(alice, 'nothing', 'x'), NotFoundError);
    await assert.rejects(a.docs.delete(alice, 'nothing'), NotFoundError);
    for (const id of ['../escape', '/etc/passwd', 'a/../../b', 'a/./b', '.hidden', 'a//b', 'a/', '', 'x'.repeat(257), 'a\\b', 'a/\u0000']) {
      await assert.rejects(a.docs.create(alice, id, 'x'), BadRequestError, JSON.stringify(id));
      await assert.rejects(a.docs.get(id), BadRequestError, JSON.stringify(id));
    }
    await assert.rejects(a.docs.rename(alice, 'zeta', '../zeta'), BadRequestError);
    assert.deepEqual(readdirSync(root).sort(), ['a', 'b']);
  });

  test('update, rename and delete on A reach B and B\'s directory; emptied parent directories go', async () => {
    await a.docs.update(alice, 'runbooks/deploy', '# Deploy, revised\n');
    await within(PROPAGATION_MS, 'B\'s file is updated', () => readFileSync(join(b.dir, 'runbooks', 'deploy.md'), 'utf8') === '# Deploy, revised\n');
    await assert.rejects(a.docs.rename(alice, 'runbooks/deploy', 'zeta'), AlreadyExistsError);
    await assert.rejects(a.docs.rename(alice, 'nothing', 'other'), NotFoundError);
    const moved = await a.docs.rename(alice, 'runbooks/deploy', 'guides/release/deploy');
    assert.equal(moved.content, '# Deploy, revised\n');
    await within(PROPAGATION_MS, 'B\'s directory follows the rename', () => existsSync(join(b.dir, 'guides', 'release', 'deploy.md')) && !existsSync(join(b.dir, 'runbooks')));
    assert.equal(ids(b).includes('runbooks/deploy'), false);
    await b.docs.delete(bob, 'guides/release/deploy');
    await within(PROPAGATION_MS, 'A\'s file and its emptied directories are removed', () => !existsSync(join(a.dir, 'guides')));
    assert.deepEqual(b.changes.at(-1), ['guides/release/deploy', undefined]);
    await assert.rejects(a.docs.get('guides/release/deploy'), NotFoundError);
  });

  test('simultaneous creates of one id on the two: exactly one winner', async () => {
    const results = await Promise.allSettled([a.docs.create(alice, 'race', 'a'), b.docs.create(bob, 'race', 'b')]);
    assert.deepEqual(results.map((r) => r.status).sort(), ['fulfilled', 'rejected']);
    assert.ok(results.some((r) => r.status === 'rejected' && r.reason instanceof AlreadyExistsError));
  });

  test('a file a run writes under DAG_DOCS_DIR (<docsDir>/<dag>/...) is imported and reaches the other coordinator; files that are not documents are not', async () => {
    mkdirSync(join(b.dir, 'nightly-report'), { recursive: true });
    writeFileSync(join(b.dir, 'nightly-report', 'summary.md'), '---\ntitle: Nightly\n---\nall green\n');
    writeFileSync(join(b.dir, 'nightly-report', 'data.json'), '{}');
    writeFileSync(join(b.dir, 'nightly-report', '.draft.md'), 'not a document id');
    await within(IMPORT_MS, 'A reads the run\'s document', () => ids(a).includes('nightly-report/summary'));
    assert.equal((await a.docs.get('nightly-report/summary')).title, 'Nightly');
    await within(PROPAGATION_MS, 'A\'s directory has it', () => existsSync(join(a.dir, 'nightly-report', 'summary.md')));
    assert.equal(ids(a).some((id) => id.includes('draft') || id.includes('data')), false);
  });
});
