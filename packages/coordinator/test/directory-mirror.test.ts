// The directory mirror's races with hand edits, made deterministic through its MirrorFiles seam.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openTestDb } from '@trellis/store/testing';
import { createSilentLogger, DagFiles, DirectoryMirror, StoredFileCaches } from '@trellis/coordinator';

/** DAG files whose `onRead` runs before each read, `onWrite` before each write: a user acting between the mirror's steps. */
class InterleavedDagFiles extends DagFiles {
  onRead: ((name: string) => void) | undefined;
  onWrite: ((name: string) => void) | undefined;

  override read(name: string) {
    this.onRead?.(name);
    return super.read(name);
  }

  override write(name: string, text: string, unchanged: (current: string | undefined) => boolean) {
    this.onWrite?.(name);
    return super.write(name, text, unchanged);
  }
}

let root: string;
let cleanup: () => Promise<void>;
let caches: StoredFileCaches;
let mirror: DirectoryMirror;
let files: InterleavedDagFiles;

before(async () => {
  root = mkdtempSync(join(tmpdir(), 'trellis-mirror-'));
  const opened = await openTestDb('directory_mirror');
  cleanup = opened.cleanup;
  const logger = createSilentLogger();
  caches = new StoredFileCaches(opened.db, logger, 'instance-mirror');
  await caches.start();
  files = new InterleavedDagFiles(join(root, 'dags'));
  mirror = new DirectoryMirror(opened.db, caches.dag, files, logger, `directory ${root}`);
  await mirror.start({ watch: true });
});

after(async () => {
  await mirror.stop();
  await caches.stop();
  await cleanup();
  rmSync(root, { recursive: true, force: true });
});

async function within(ms: number, what: string, check: () => boolean): Promise<void> {
  for (const deadline = Date.now() + ms; !check(); await new Promise((r) => setTimeout(r, 20))) {
    if (Date.now() > deadline) assert.fail(`${what} did not happen within ${ms} ms`);
  }
}

test('a file deleted by hand just after its import is deleted, not written back by the announcement of that import', async () => {
  const path = join(root, 'dags', 'handmade.yaml');
  let reads = 0;
  // The first read is the import of the new file; before the second (the import's own change
  // coming back to the mirror) the user deletes the file.
  files.onRead = (name) => {
    if (name !== 'handmade') return;
    reads += 1;
    if (reads === 2) rmSync(path);
  };
  writeFileSync(path, 'steps:\n  - name: s\n    command: echo hand\n');
  await within(10_000, 'the hand-made file is imported', () => reads >= 2);
  await within(10_000, 'the delete by hand deletes the stored file', () => caches.dag.get('handmade') === undefined);
  files.onRead = undefined;
  assert.equal(existsSync(path), false, 'the deleted file stays deleted');
});

test('a file edited by hand while the mirror writes a database change to it is kept, and imported', async () => {
  const path = join(root, 'dags', 'incoming.yaml');
  const hand = 'steps:\n  - name: s\n    command: echo by hand\n';
  // After the mirror looked (no file) and before its write lands, the user writes the file.
  files.onWrite = (name) => {
    if (name !== 'incoming') return;
    files.onWrite = undefined;
    writeFileSync(path, hand);
  };
  await caches.dag.put('incoming', 'steps:\n  - name: s\n    command: echo from the api\n', 'api');
  await within(10_000, 'the hand edit is imported', () => caches.dag.get('incoming')?.content === hand);
  assert.equal(readFileSync(path, 'utf8'), hand, 'the hand edit stays on disk');
});
