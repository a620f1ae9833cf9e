// The docs directory's recursive watch (DocFiles.watch) on a real file system. Node's recursive
// watch on Linux stops with an error when a directory goes away while it reads it (ENOENT from
// scandir: a deleted document's emptied directory, removed while the watch looked into it). The
// docs watch then stopped for good, and files runs wrote under DAG_DOCS_DIR were never imported
// (api.docs.test.ts failed on it once a second coordinator in the process made the race likely).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { watch, mkdtempSync, rmSync, writeFileSync, type FSWatcher } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DocFiles, type WatchTree } from '@trellis/coordinator';

const root = mkdtempSync(join(tmpdir(), 'trellis-docs-watch-'));
after(() => rmSync(root, { recursive: true, force: true }));

async function until(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`${what} did not happen within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('after the recursive watch stops on an error, a new one starts and what was missed is seen', async () => {
  const watchers: FSWatcher[] = [];
  // Node's own recursive watch, kept at hand so the test can raise the error it raises.
  const watchTree: WatchTree = (dir, listener) => {
    const watcher = watch(dir, { recursive: true }, listener);
    watchers.push(watcher);
    return watcher;
  };
  const seen = new Set<string>();
  const stop = new DocFiles(root, watchTree).watch((id) => seen.add(id));
  assert.ok(stop, 'the docs directory can be watched');
  try {
    writeFileSync(join(root, 'before.md'), 'seen by the first watch\n');
    await until('the first document is seen', () => seen.has('before'));
    const vanished = Object.assign(new Error(`ENOENT: no such file or directory, scandir '${join(root, 'gone')}'`), { code: 'ENOENT', syscall: 'scandir' });
    watchers[0]?.emit('error', vanished);
    // Written while no watch runs (the first stopped, the next not yet started): the look at every document finds it.
    writeFileSync(join(root, 'meanwhile.md'), 'written between the watches\n');
    await until('a new watch starts', () => watchers.length === 2);
    await until('the document written between the watches is seen', () => seen.has('meanwhile'));
    writeFileSync(join(root, 'after.md'), 'seen by the new watch\n');
    await until('a document written later is seen', () => seen.has('after'));
  } finally {
    stop?.();
  }
  assert.equal(watchers.length, 2, 'one new watch, no more');
});
