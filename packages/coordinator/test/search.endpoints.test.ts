// Search over DAG specs and documents (/search/*, /docs/search, /dags/search) through real HTTP,
// on PGlite or, with TRELLIS_TEST_DATABASE_URL, PostgreSQL; a second coordinator on the same
// database edits, and the first one's search follows within the issue's bound.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openTestDb } from '@trellis/store/testing';
import type { Actor } from '@trellis/coordinator';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';

/** Who the documents written directly through the service are by (the audit trail names it). */
const TESTER: Actor = { kind: 'user', id: 'tester', name: 'tester' };

type Json = Record<string, unknown>;
interface Match {
  line: string;
  lineNumber: number;
  startLine: number;
}

/** What a change may take to reach the other coordinator (the issue's bound). */
const PROPAGATION_MS = 1000;

/** Twelve matching lines (2, 4, ..., 24) in a spec of 25 lines. */
const MANY_LINES = ['steps:', ...Array.from({ length: 12 }, (_, i) => [`  - name: s${i}`, `    command: echo NEEDLE ${i}`]).flat()].join('\n') + '\n';

const DAGS: Record<string, string> = {
  alpha: 'description: Finds the Needle\nsteps:\n  - name: s\n    command: echo hay\n',
  beta: MANY_LINES,
  gamma: 'steps:\n  - name: s\n    command: echo needle\n',
  delta: 'steps:\n  - name: s\n    command: echo nothing here\n',
  epsilon: 'steps:\n  - name: s\n    command: echo neEdLe\n',
};

let a: TestCoordinator;
let b: TestCoordinator;
let cleanup: () => Promise<void>;
/** A's docs directory: one document file, and files whose names are not document ids. */
let docsA: string;

const get = async (t: TestCoordinator, path: string) => t.call('GET', path);
const q = (text: string) => encodeURIComponent(text);
const fileNames = (body: Json) => (body.results as Json[]).map((r) => r.fileName);
const docIds = (body: Json) => (body.results as Json[]).map((r) => r.id);

async function within(ms: number, what: string, check: () => Promise<boolean>): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > ms) assert.fail(`${what} did not happen within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function assertBadRequest(res: { status: number; json: Json }, field: string): void {
  assert.equal(res.status, 400, JSON.stringify(res.json));
  assert.equal(res.json.code, 'bad_request');
  assert.match(res.json.message as string, new RegExp(field));
}

before(async () => {
  const opened = await openTestDb('search_endpoints');
  cleanup = opened.cleanup;
  docsA = mkdtempSync(join(tmpdir(), 'trellis-search-docs-'));
  mkdirSync(join(docsA, '.hidden'));
  writeFileSync(join(docsA, 'from-disk.md'), 'an imported-word\n');
  writeFileSync(join(docsA, '_draft.md'), 'an imported-word\n');
  writeFileSync(join(docsA, '.hidden', 'secret.md'), 'an imported-word\n');
  a = await startTestCoordinator('search_a', DAGS, { docsDir: docsA }, { db: opened.db });
  b = await startTestCoordinator('search_b', {}, {}, { db: opened.second !== undefined ? await opened.second() : opened.db });
  await a.coordinator.documents.create(TESTER, 'runbooks/deploy', '---\ntitle: Deploying safely\n---\n# Deploy\nCheck the NEEDLE first.\nthen the needle again\n');
  await a.coordinator.documents.create(TESTER, 'notes', 'plain text, no match\n');
  await a.coordinator.documents.create(TESTER, 'oncall', 'who holds the pager\nneedle in a haystack\n');
});

after(async () => {
  await Promise.all([a.stop(), b.stop()]);
  await cleanup();
  rmSync(docsA, { recursive: true, force: true });
});

describe('GET /search/dags', () => {
  test('case-insensitive, sorted by file name, each result with its first matching lines and their numbers', async () => {
    const res = await get(a, `/search/dags?q=${q('nEeDlE')}`);
    assert.equal(res.status, 200, JSON.stringify(res.json));
    assert.deepEqual(fileNames(res.json), ['alpha', 'beta', 'epsilon', 'gamma']);
    assert.equal(res.json.hasMore, false);
    assert.equal(res.json.nextCursor, undefined);
    const [alpha, beta] = res.json.results as Json[];
    assert.deepEqual(alpha, { fileName: 'alpha', name: 'alpha', matches: [{ line: 'description: Finds the Needle', lineNumber: 1, startLine: 1 }], hasMoreMatches: false });
    assert.deepEqual((beta?.matches as Match[]).map((m) => m.lineNumber), [3, 5, 7]);
    assert.equal(beta?.hasMoreMatches, true);
    assert.equal(typeof beta?.nextMatchesCursor, 'string');
  });

  test('pages with hasMore and an opaque cursor until the last page, which has neither', async () => {
    const seen: unknown[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await get(a, `/search/dags?q=needle&limit=1${cursor !== undefined ? `&cursor=${q(cursor)}` : ''}`);
      assert.equal(res.status, 200, JSON.stringify(res.json));
      seen.push(...fileNames(res.json));
      cursor = res.json.nextCursor as string | undefined;
      assert.equal(res.json.hasMore, cursor !== undefined);
      pages += 1;
    } while (cursor !== undefined);
    assert.deepEqual(seen, ['alpha', 'beta', 'epsilon', 'gamma']);
    assert.equal(pages, 4);
  });

  test('a page resumes after its last result even when results before it are deleted meanwhile', async () => {
    await a.call('POST', '/dags', { name: 'aardvark', spec: 'steps:\n  - name: s\n    command: echo needle\n' });
    const first = await get(a, '/search/dags?q=needle&limit=2');
    assert.deepEqual(fileNames(first.json), ['aardvark', 'alpha']);
    assert.equal((await a.call('DELETE', '/dags/aardvark')).status, 204);
    const next = await get(a, `/search/dags?q=needle&limit=2&cursor=${q(first.json.nextCursor as string)}`);
    assert.deepEqual(fileNames(next.json), ['beta', 'epsilon']);
  });

  test('nothing matches: an empty page', async () => {
    const res = await get(a, '/search/dags?q=zzz-no-such-text');
    assert.deepEqual(res.json, { results: [], hasMore: false });
  });

  test('q is required, 1-256 characters; limit 1-100', async () => {
    assertBadRequest(await get(a, '/search/dags'), 'q');
    assertBadRequest(await get(a, '/search/dags?q='), 'q');
    assertBadRequest(await get(a, `/search/dags?q=${'x'.repeat(257)}`), 'q');
    assert.equal((await get(a, `/search/dags?q=${'x'.repeat(256)}`)).status, 200);
    assertBadRequest(await get(a, '/search/dags?q=needle&limit=0'), 'limit');
    assertBadRequest(await get(a, '/search/dags?q=needle&limit=101'), 'limit');
    assertBadRequest(await get(a, '/search/dags?q=a&q=b'), 'q');
  });

  test('a cursor that is not one, or continues another search, is 400', async () => {
    const page = await get(a, '/search/dags?q=needle&limit=1');
    const cursor = page.json.nextCursor as string;
    assertBadRequest(await get(a, '/search/dags?q=needle&cursor=not-a-cursor'), 'cursor');
    assertBadRequest(await get(a, `/search/dags?q=needle&cursor=${q(Buffer.from('{"scope":1}').toString('base64url'))}`), 'cursor');
    assertBadRequest(await get(a, `/search/dags?q=other&cursor=${q(cursor)}`), 'cursor');
    assertBadRequest(await get(a, `/search/docs?q=needle&cursor=${q(cursor)}`), 'cursor');
    assertBadRequest(await get(a, `/search/dags/beta/matches?q=needle&cursor=${q(cursor)}`), 'cursor');
    assertBadRequest(await get(a, `/search/dags?q=needle&cursor=${'x'.repeat(3000)}`), 'cursor');
  });
});

describe('GET /search/dags/{fileName}/matches', () => {
  test('continues a result\'s matches from its nextMatchesCursor, a page at a time, to the end', async () => {
    const search = await get(a, '/search/dags?q=NEEDLE');
    const beta = (search.json.results as Json[]).find((r) => r.fileName === 'beta');
    const next = await get(a, `/search/dags/beta/matches?q=NEEDLE&cursor=${q(beta?.nextMatchesCursor as string)}`);
    assert.equal(next.status, 200, JSON.stringify(next.json));
    assert.deepEqual((next.json.matches as Match[]).map((m) => m.lineNumber), [9, 11, 13, 15, 17, 19, 21, 23, 25]);
    assert.deepEqual((next.json.matches as Match[])[0], { line: '    command: echo NEEDLE 3', lineNumber: 9, startLine: 9 });
    assert.deepEqual([next.json.hasMore, next.json.nextCursor], [false, undefined]);
    const all = await get(a, '/search/dags/beta/matches?q=needle');
    assert.equal((all.json.matches as Match[]).length, 12);
  });

  test('more than a page of matches: hasMore and a cursor', async () => {
    const lines = Array.from({ length: 45 }, (_, i) => `# needle ${i}`).join('\n');
    await a.call('POST', '/dags', { name: 'many', spec: `${lines}\nsteps:\n  - name: s\n    command: echo hi\n` });
    const first = await get(a, '/search/dags/many/matches?q=needle');
    assert.deepEqual([(first.json.matches as Match[]).length, first.json.hasMore], [20, true]);
    const second = await get(a, `/search/dags/many/matches?q=needle&cursor=${q(first.json.nextCursor as string)}`);
    assert.deepEqual([(second.json.matches as Match[])[0]?.lineNumber, second.json.hasMore], [21, true]);
    const third = await get(a, `/search/dags/many/matches?q=needle&cursor=${q(second.json.nextCursor as string)}`);
    assert.deepEqual([(third.json.matches as Match[]).length, third.json.hasMore, third.json.nextCursor], [5, false, undefined]);
    await a.call('DELETE', '/dags/many');
  });

  test('404 for an unknown DAG, 400 for a file name the contract refuses, an empty page for no match', async () => {
    const missing = await get(a, '/search/dags/no_such_dag/matches?q=needle');
    assert.deepEqual([missing.status, missing.json.code], [404, 'not_found']);
    assertBadRequest(await get(a, '/search/dags/bad.name/matches?q=needle'), 'DAG name');
    assertBadRequest(await get(a, '/search/dags/beta/matches'), 'q');
    assert.deepEqual((await get(a, '/search/dags/delta/matches?q=needle')).json, { matches: [], hasMore: false });
  });
});

describe('GET /search/docs and /search/docs/matches', () => {
  test('matching documents by id with their titles and first matching lines', async () => {
    const res = await get(a, '/search/docs?q=NEEDLE');
    assert.equal(res.status, 200, JSON.stringify(res.json));
    assert.deepEqual(res.json, {
      results: [
        { id: 'oncall', title: 'oncall', matches: [{ line: 'needle in a haystack', lineNumber: 2, startLine: 2 }], hasMoreMatches: false },
        {
          id: 'runbooks/deploy',
          title: 'Deploying safely',
          matches: [
            { line: 'Check the NEEDLE first.', lineNumber: 5, startLine: 5 },
            { line: 'then the needle again', lineNumber: 6, startLine: 6 },
          ],
          hasMoreMatches: false,
        },
      ],
      hasMore: false,
    });
    const paged = await get(a, '/search/docs?q=needle&limit=1');
    assert.deepEqual([docIds(paged.json), paged.json.hasMore], [['oncall'], true]);
    const rest = await get(a, `/search/docs?q=needle&limit=1&cursor=${q(paged.json.nextCursor as string)}`);
    assert.deepEqual([docIds(rest.json), rest.json.hasMore], [['runbooks/deploy'], false]);
  });

  test('files in the docs directory whose names are not document ids are not searched', async () => {
    assert.deepEqual(docIds((await get(a, '/search/docs?q=imported-word')).json), ['from-disk']);
    assert.deepEqual(docIds((await get(a, '/docs/search?q=imported-word')).json), ['from-disk']);
  });

  test('one document\'s matches by path; 404 for a missing document; traversal and bad ids are 400', async () => {
    const res = await get(a, `/search/docs/matches?path=${q('runbooks/deploy')}&q=needle`);
    assert.deepEqual(res.json, { matches: [{ line: 'Check the NEEDLE first.', lineNumber: 5, startLine: 5 }, { line: 'then the needle again', lineNumber: 6, startLine: 6 }], hasMore: false });
    const missing = await get(a, '/search/docs/matches?path=nope&q=needle');
    assert.deepEqual([missing.status, missing.json.code], [404, 'not_found']);
    for (const path of ['../etc/passwd', '%2e%2e/x', '/etc/passwd', 'a//b', '', 'x'.repeat(257)]) assertBadRequest(await get(a, `/search/docs/matches?path=${q(path)}&q=needle`), 'path');
    assertBadRequest(await get(a, '/search/docs/matches?q=needle'), 'path');
  });
});

describe('GET /docs/search and GET /dags/search', () => {
  test('/docs/search: every matching document with {id, title, matches}; 400 without q', async () => {
    const res = await get(a, '/docs/search?q=needle');
    assert.equal(res.status, 200, JSON.stringify(res.json));
    assert.deepEqual(res.json.results, [
      { id: 'oncall', title: 'oncall', matches: [{ line: 'needle in a haystack', lineNumber: 2, startLine: 2 }] },
      { id: 'runbooks/deploy', title: 'Deploying safely', matches: [{ line: 'Check the NEEDLE first.', lineNumber: 5, startLine: 5 }, { line: 'then the needle again', lineNumber: 6, startLine: 6 }] },
    ]);
    assertBadRequest(await get(a, '/docs/search'), 'q');
    assertBadRequest(await get(a, `/docs/search?q=${'x'.repeat(257)}`), 'q');
  });

  test('/dags/search finds what /search/dags finds, with the same preview lines', async () => {
    const legacy = await get(a, '/dags/search?q=Needle');
    const paged = await get(a, '/search/dags?q=Needle&limit=100');
    assert.deepEqual(fileNames(legacy.json), fileNames(paged.json));
    const legacyBeta = (legacy.json.results as Json[]).find((r) => r.fileName === 'beta');
    assert.deepEqual((legacyBeta?.matches as Match[]).map((m) => m.lineNumber), [3, 5, 7]);
    assert.deepEqual(legacyBeta?.matches, (paged.json.results as Json[]).find((r) => r.fileName === 'beta')?.matches);
    assert.equal((legacyBeta?.dag as Json).name, 'beta');
    assertBadRequest(await get(a, `/dags/search?q=${'x'.repeat(257)}`), 'q');
  });
});

describe('the index follows changes', () => {
  test('an edit, a rename and a delete on this coordinator are searchable when the write answers', async () => {
    assert.equal((await a.call('PUT', '/dags/delta/spec', { spec: 'steps:\n  - name: s\n    command: echo fresh-word\n' })).status, 200);
    assert.deepEqual(fileNames((await get(a, '/search/dags?q=fresh-word')).json), ['delta']);
    assert.equal((await a.call('POST', '/dags/delta/rename', { newFileName: 'delta2' })).status, 200);
    assert.deepEqual(fileNames((await get(a, '/search/dags?q=fresh-word')).json), ['delta2']);
    assert.equal((await a.call('DELETE', '/dags/delta2')).status, 204);
    assert.deepEqual(fileNames((await get(a, '/search/dags?q=fresh-word')).json), []);
    await a.coordinator.documents.update(TESTER, 'notes', 'now with a fresh-word\n');
    assert.deepEqual(docIds((await get(a, '/search/docs?q=fresh-word')).json), ['notes']);
    await a.coordinator.documents.rename(TESTER, 'notes', 'archive/notes');
    assert.deepEqual(docIds((await get(a, '/search/docs?q=fresh-word')).json), ['archive/notes']);
  });

  test('an edit through a second coordinator on the same database shows up in the first one\'s search within 1 s', async () => {
    assert.equal((await b.call('POST', '/dags', { name: 'from_b', spec: 'steps:\n  - name: s\n    command: echo made-on-b\n' })).status, 201);
    await within(PROPAGATION_MS, 'A finds the DAG created on B', async () => fileNames((await get(a, '/search/dags?q=MADE-ON-B')).json).includes('from_b'));
    assert.equal((await b.call('PUT', '/dags/gamma/spec', { spec: 'steps:\n  - name: s\n    command: echo changed-on-b\n' })).status, 200);
    await within(PROPAGATION_MS, 'A finds the edit made on B', async () => fileNames((await get(a, '/search/dags?q=changed-on-b')).json).includes('gamma'));
    await within(PROPAGATION_MS, 'A no longer finds the old text', async () => !fileNames((await get(a, '/search/dags?q=needle')).json).includes('gamma'));
    await b.coordinator.documents.create(TESTER, 'from-b', 'written on b\n');
    await within(PROPAGATION_MS, 'A finds the document created on B', async () => docIds((await get(a, '/docs/search?q=WRITTEN ON B')).json).includes('from-b'));
    await b.coordinator.documents.delete(TESTER, 'oncall');
    await within(PROPAGATION_MS, 'A forgets the document deleted on B', async () => !docIds((await get(a, '/search/docs?q=haystack')).json).includes('oncall'));
  });
});
