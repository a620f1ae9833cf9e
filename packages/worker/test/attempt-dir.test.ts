import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AttemptFolders } from '../src/tasks/attempt-dir.js';

/** What the engine leaves in an attempt's folder: logs, and a work directory. */
function fill(dir: string, logs: number, workFiles: string[] = []): void {
  mkdirSync(join(dir, 'work'), { recursive: true });
  writeFileSync(join(dir, 'run.log'), 'log\n');
  for (let i = 0; i < logs; i += 1) writeFileSync(join(dir, `step_${i}.out`), 'out\n');
  if (workFiles.length > 0) mkdirSync(join(dir, 'work', 'deep'));
  for (const name of workFiles) writeFileSync(join(dir, 'work', 'deep', name), 'data\n');
}

describe('attempt folders', () => {
  test('a released folder is emptied and handed to the next attempt; filled, large and surplus ones are removed', async () => {
    const root = mkdtempSync(join(tmpdir(), 'trellis-attempt-'));
    try {
      const folders = new AttemptFolders(root, 2);
      const [usual, filled, large, surplus] = [folders.take(), folders.take(), folders.take(), folders.take()] as [string, string, string, string];
      assert.equal(new Set([usual, filled, large, surplus]).size, 4, 'distinct folders while all are busy');
      fill(usual, 2);
      fill(filled, 2, ['a.bin', 'b.bin']);
      fill(large, 100);
      fill(surplus, 1);
      for (const dir of [usual, filled, large]) await folders.release(dir);
      assert.deepEqual(readdirSync(usual).sort(), ['run.log', 'step_0.out', 'step_1.out', 'work'], 'log files and the empty work directory kept');
      for (const log of ['run.log', 'step_0.out', 'step_1.out']) assert.equal(statSync(join(usual, log)).size, 0, `${log} truncated for the next attempt`);
      assert.equal(existsSync(filled), false, 'a work tree the steps filled is removed whole');
      assert.equal(existsSync(large), false, 'a large folder is removed off the event loop');
      fill(filled, 1);
      await folders.release(filled);
      await folders.release(surplus);
      assert.equal(existsSync(surplus), false, 'beyond the idle limit a folder is removed');
      const reused = [folders.take(), folders.take()].sort();
      assert.deepEqual(reused, [filled, usual].sort());
      assert.notEqual(folders.take(), usual, 'the pool is empty again: a new name');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test('a link a step left in its folder is removed, never followed', async () => {
    const root = mkdtempSync(join(tmpdir(), 'trellis-attempt-'));
    try {
      const folders = new AttemptFolders(root, 2);
      const dir = folders.take();
      fill(dir, 1);
      const outside = join(root, 'precious.txt');
      writeFileSync(outside, 'keep me\n');
      symlinkSync(outside, join(dir, 'step_9.out'));
      await folders.release(dir);
      assert.equal(readFileSync(outside, 'utf8'), 'keep me\n', 'the link target is untouched');
      assert.deepEqual(readdirSync(dir).sort(), ['run.log', 'step_0.out', 'work']);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test("a new process clears what an earlier one left", async () => {
    const root = mkdtempSync(join(tmpdir(), 'trellis-attempt-'));
    try {
      fill(join(root, 'runs', 'a1-1'), 1);
      await new AttemptFolders(root, 2).clearLeftovers();
      assert.equal(existsSync(join(root, 'runs')), false);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
