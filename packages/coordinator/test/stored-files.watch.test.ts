// The watches of the mirrored directories on a real file system: DAG definitions (DagFiles),
// documents (DocFiles, a recursive watch) and the base configuration file (SingleFile). Node's
// fs.watch stops for good on an error: on Linux a recursive watch raises ENOENT when a directory
// vanishes while it reads it (a deleted document's emptied directory). These watches used to
// close then, so files written later, by hand or by runs under DAG_DOCS_DIR, were never imported
// again until a restart. Now a new watch starts, and everything is looked at again for what
// changed while none ran.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { watch, mkdirSync, mkdtempSync, rmSync, writeFileSync, type FSWatcher } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DagFiles, DocFiles, SingleFile, type WatchDirectory } from '@trellis/coordinator';
import { until } from './support/until.js';

const root = mkdtempSync(join(tmpdir(), 'trellis-stored-files-watch-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** Node's own watch, each watcher kept so the test can raise the error Node raises. */
function keptWatches(recursive: boolean): { watchers: FSWatcher[]; watchDirectory: WatchDirectory } {
  const watchers: FSWatcher[] = [];
  return {
    watchers,
    watchDirectory: (dir, listener) => {
      const watcher = watch(dir, { recursive }, listener);
      watchers.push(watcher);
      return watcher;
    },
  };
}

interface Case {
  /** The watch under test, on `dir`, with Node's watch handed in. */
  watch: (dir: string, watchDirectory: WatchDirectory, onName: (name: string) => void) => (() => void) | undefined;
  recursive: boolean;
  /** The file of a name, relative to `dir`. */
  fileOf: (name: string) => string;
  error: NodeJS.ErrnoException;
}

const cases: Record<string, Case> = {
  'the definitions directory': {
    watch: (dir, watchDirectory, onName) => new DagFiles(dir, watchDirectory).watch(onName),
    recursive: false,
    fileOf: (name) => `${name}.yaml`,
    error: Object.assign(new Error('EPERM: operation not permitted, watch'), { code: 'EPERM', syscall: 'watch' }),
  },
  'the documents tree': {
    watch: (dir, watchDirectory, onName) => new DocFiles(dir, watchDirectory).watch(onName),
    recursive: true,
    fileOf: (name) => `${name}.md`,
    error: Object.assign(new Error('ENOENT: no such file or directory, scandir'), { code: 'ENOENT', syscall: 'scandir' }),
  },
};

for (const [what, c] of Object.entries(cases)) {
  test(`${what} is watched again after an error, and what was written meanwhile is seen`, async () => {
    const dir = join(root, what.replaceAll(' ', '-'));
    mkdirSync(dir);
    const { watchers, watchDirectory } = keptWatches(c.recursive);
    const seen = new Set<string>();
    const stop = c.watch(dir, watchDirectory, (name) => seen.add(name));
    assert.ok(stop, 'the directory can be watched');
    try {
      writeFileSync(join(dir, c.fileOf('before')), 'seen by the first watch\n');
      await until('the first file is seen', () => seen.has('before'));
      watchers[0]?.emit('error', c.error);
      // Written while no watch runs (the first stopped, the next not yet started): the look at every file finds it.
      writeFileSync(join(dir, c.fileOf('meanwhile')), 'written between the watches\n');
      await until('a new watch starts', () => watchers.length === 2);
      await until('the file written between the watches is seen', () => seen.has('meanwhile'));
      writeFileSync(join(dir, c.fileOf('after')), 'seen by the new watch\n');
      await until('a file written later is seen', () => seen.has('after'));
    } finally {
      stop?.();
    }
    assert.equal(watchers.length, 2, 'one new watch, no more');
  });
}

test('the base configuration file is watched again after an error, and looked at once the new watch runs', async () => {
  const dir = join(root, 'base');
  mkdirSync(dir);
  const { watchers, watchDirectory } = keptWatches(false);
  let changes = 0;
  const stop = new SingleFile(join(dir, 'base.yaml'), 'base', watchDirectory).watch((name) => {
    assert.equal(name, 'base');
    changes += 1;
  });
  try {
    writeFileSync(join(dir, 'base.yaml'), 'env: []\n');
    await until('the first edit is seen', () => changes > 0);
    const before = changes;
    watchers[0]?.emit('error', cases['the definitions directory']!.error);
    await until('a new watch starts', () => watchers.length === 2);
    await until('the file is looked at again', () => changes > before);
    const restarted = changes;
    writeFileSync(join(dir, 'base.yaml'), 'env: [A=1]\n');
    await until('an edit after the new watch is seen', () => changes > restarted);
  } finally {
    stop?.();
  }
  assert.equal(watchers.length, 2, 'one new watch, no more');
});
