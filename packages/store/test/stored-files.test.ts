// Stored files (DAG definitions, base configuration, documents) on PGlite, or on PostgreSQL
// with TRELLIS_TEST_DATABASE_URL, where a second pool stands for a second coordinator.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  contentHash, createStoredFile, deleteStoredFile, listenStoredFiles, putStoredFile, putStoredFiles, renameStoredFile, storedFilesSince, storedFilesVersion, storedVersions, swapStoredFiles, updateStoredFile,
  type Db, type StoredFileKind,
} from '@trellis/store';
import { openTestDb } from '@trellis/store/testing';

/** A writer on one coordinator instance. */
const as = (by: string) => ({ by, origin: `instance-${by}` });

let db: Db;
let other: Db;
let cleanup: () => Promise<void>;

before(async () => {
  const opened = await openTestDb('stored_files');
  db = opened.db;
  cleanup = opened.cleanup;
  other = opened.second !== undefined ? await opened.second() : db;
});
after(async () => cleanup());

describe('stored files', () => {
  test('create refuses a live name, revives a tombstone, and each write takes the next version of its kind', async () => {
    const start = await storedFilesVersion(db, 'dag');
    const created = await createStoredFile(db, 'dag', 'one', 'steps: [a]\n', as('alice'));
    assert.equal(created?.content, 'steps: [a]\n');
    assert.equal(created?.version, start + 1);
    assert.equal(await createStoredFile(other, 'dag', 'one', 'steps: [b]\n', as('bob')), undefined);
    assert.equal((await updateStoredFile(db, 'dag', 'one', 'steps: [c]\n', as('alice')))?.version, start + 2);
    assert.equal((await deleteStoredFile(db, 'dag', 'one', as('alice')))?.content, null);
    assert.equal(await deleteStoredFile(db, 'dag', 'one', as('alice')), undefined, 'a second delete finds nothing live');
    assert.equal(await updateStoredFile(db, 'dag', 'one', 'x', as('alice')), undefined, 'a tombstone cannot be updated');
    const revived = await createStoredFile(other, 'dag', 'one', 'steps: [d]\n', as('bob'));
    assert.equal(revived?.updatedBy, 'bob');
    assert.equal(revived?.origin, 'instance-bob');
    assert.equal(await storedFilesVersion(db, 'dag'), start + 4);
    assert.equal(await storedFilesVersion(db, 'doc'), 0, 'kinds count their versions apart');
    const both = await storedVersions(db, ['dag', 'doc']);
    assert.deepEqual([...both.files].sort(), [['dag', start + 4], ['doc', 0]], 'one read gives each kind its own counter');
    assert.equal(both.profiles, 0, 'and the profile counter, which no file write moves');
  });

  test('catching up by version sees writes and deletes (tombstones), oldest first', async () => {
    const seen = await storedFilesVersion(db, 'doc');
    await createStoredFile(db, 'doc', 'notes/a', '# a\n', as('alice'));
    await createStoredFile(db, 'doc', 'notes/b', '# b\n', as('alice'));
    await deleteStoredFile(other, 'doc', 'notes/a', as('bob'));
    const rows = await storedFilesSince(db, 'doc', seen);
    assert.deepEqual(rows.map((r) => [r.name, r.content]), [['notes/b', '# b\n'], ['notes/a', null]]);
    assert.deepEqual(await storedFilesSince(db, 'doc', await storedFilesVersion(db, 'doc')), []);
  });

  test('rename moves in one transaction: 404-like when the source is missing, 409-like when the target is taken', async () => {
    await createStoredFile(db, 'dag', 'from', 'steps: [f]\n', as('alice'));
    await createStoredFile(db, 'dag', 'taken', 'steps: [t]\n', as('alice'));
    assert.deepEqual(await renameStoredFile(db, 'dag', 'nothing', 'x', as('alice')), { renamed: false, reason: 'missing' });
    const before = await storedFilesVersion(db, 'dag');
    assert.deepEqual(await renameStoredFile(other, 'dag', 'from', 'taken', as('bob')), { renamed: false, reason: 'taken' });
    assert.equal(await storedFilesVersion(db, 'dag'), before, 'a refused rename takes no version');
    const moved = await renameStoredFile(other, 'dag', 'from', 'to', as('bob'));
    assert.ok(moved.renamed);
    assert.equal(moved.target.content, 'steps: [f]\n');
    assert.equal(moved.source.content, null);
    assert.deepEqual((await storedFilesSince(db, 'dag', before)).map((r) => [r.name, r.content]), [['from', null], ['to', 'steps: [f]\n']]);
  });

  test('an import of unchanged content writes nothing; content keeps a NUL byte', async () => {
    const text = 'steps:\n  - echo "a\u0000b"\n';
    const put = await putStoredFile(db, 'dag', 'nul', text, as('directory'));
    assert.equal(put?.content, text);
    assert.equal(await putStoredFile(other, 'dag', 'nul', text, as('directory')), undefined);
    assert.equal((await storedFilesSince(db, 'dag', (put?.version ?? 1) - 1)).find((r) => r.name === 'nul')?.content, text);
  });

  test('a batch import of 1,200 files (more than one statement) takes one version; a second import of the same writes nothing', async () => {
    const files = Array.from({ length: 1200 }, (_, i) => ({ name: `batch-${i}`, content: `steps: [s${i}]\n` }));
    const before = await storedFilesVersion(db, 'dag');
    assert.equal(await putStoredFiles(db, 'dag', files, as('directory')), 1200);
    assert.equal(await storedFilesVersion(db, 'dag'), before + 1);
    assert.equal(await putStoredFiles(other, 'dag', files, as('directory')), 0);
    const rows = await storedFilesSince(db, 'dag', before);
    assert.deepEqual([rows.length, rows.find((r) => r.name === 'batch-1199')?.content], [1200, 'steps: [s1199]\n']);
  });

  test('swap writes each file only if it is still as read: a file changed meanwhile is stale and kept; kinds change together with what `within` writes', async () => {
    await createStoredFile(db, 'dag', 'swap-kept', 'steps: [mine]\n', as('alice'));
    await createStoredFile(db, 'dag', 'swap-gone', 'steps: [old]\n', as('alice'));
    const before = (await storedVersions(db, ['dag', 'doc'])).files;
    const { outcomes, result } = await swapStoredFiles(other, [
      { kind: 'dag', name: 'swap-kept', content: 'steps: [theirs]\n', expectedHash: contentHash('steps: [read earlier]\n') },
      { kind: 'dag', name: 'swap-gone', content: null, expectedHash: contentHash('steps: [old]\n') },
      { kind: 'doc', name: 'swap-new', content: '# new\n', expectedHash: null },
      { kind: 'doc', name: 'swap-absent', content: null, expectedHash: null },
    ], as('sync'), async (tx, seen) => (await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM stored_files WHERE name = $1 AND content IS NULL', ['swap-gone']))[0]?.n === 1 && seen.length === 4);
    assert.equal(result, true, 'within runs in the transaction, after the writes');
    assert.deepEqual(outcomes.map((o) => [o.kind, o.name, o.outcome]).sort(), [['dag', 'swap-gone', 'written'], ['dag', 'swap-kept', 'stale'], ['doc', 'swap-absent', 'unchanged'], ['doc', 'swap-new', 'written']]);
    const after = (await storedVersions(db, ['dag', 'doc'])).files;
    assert.deepEqual([after.get('dag'), after.get('doc')], [(before.get('dag') ?? 0) + 1, (before.get('doc') ?? 0) + 1], 'one version per kind written');
    assert.equal((await storedFilesSince(db, 'dag', before.get('dag') ?? 0)).find((r) => r.name === 'swap-kept'), undefined, 'the stale file was not written');
    const unchanged = await swapStoredFiles(db, [{ kind: 'dag', name: 'swap-kept', content: 'steps: [mine]\n', expectedHash: null }], as('sync'), () => Promise.resolve());
    assert.deepEqual(unchanged.outcomes.map((o) => o.outcome), ['unchanged']);
    assert.equal(await storedFilesVersion(db, 'dag'), after.get('dag'), 'nothing written takes no version');
    await assert.rejects(swapStoredFiles(db, [{ kind: 'doc', name: 'swap-rolled-back', content: 'x', expectedHash: null }], as('sync'), () => Promise.reject(new Error('within failed'))), /within failed/);
    assert.equal(await storedFilesVersion(db, 'doc'), after.get('doc'), 'a failing within rolls the files back');
  });

  test('simultaneous creates of one name on two coordinators: exactly one winner', async () => {
    for (let round = 0; round < 10; round += 1) {
      const name = `race-${round}`;
      const results = await Promise.all([createStoredFile(db, 'dag', name, 'steps: [a]\n', as('a')), createStoredFile(other, 'dag', name, 'steps: [b]\n', as('b'))]);
      assert.equal(results.filter((r) => r !== undefined).length, 1, `round ${round}: ${JSON.stringify(results.map((r) => r?.updatedBy))}`);
    }
  });

  test('every write is announced with its kind, to listeners of any coordinator on the database', async () => {
    const heard: Array<StoredFileKind | undefined> = [];
    const stop = await listenStoredFiles(other, (kind) => heard.push(kind), (error) => assert.fail(error));
    try {
      await createStoredFile(db, 'base', 'base', 'env: [A=1]\n', as('alice'));
      await createStoredFile(db, 'doc', 'heard', 'x', as('alice'));
      const deadline = Date.now() + 2000;
      // The channel is the database's, not the schema's: other test files' writes may be heard too.
      while (!(heard.includes('base') && heard.includes('doc')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      assert.ok(heard.includes('base') && heard.includes('doc'), JSON.stringify(heard));
    } finally {
      await stop();
    }
  });
});
