import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { attemptDirOf, removeAttemptDir } from '../src/tasks/attempt-dir.js';

function attemptFolder(root: string, files: number, workFiles: string[] = []): string {
  const dir = attemptDirOf(root, { dagName: 'd', dagRunId: 'r', attemptId: `a-${files}-${workFiles.length}` });
  mkdirSync(join(dir, 'work', 'deep'), { recursive: true });
  writeFileSync(join(dir, 'run.log'), 'log\n');
  for (let i = 0; i < files; i += 1) writeFileSync(join(dir, `step_${i}.out`), 'out\n');
  for (const name of workFiles) writeFileSync(join(dir, 'work', 'deep', name), 'data\n');
  return dir;
}

describe('attempt folders', () => {
  test('one flat folder per attempt under runs/, named by a file-safe attempt id', () => {
    assert.equal(attemptDirOf('/w', { dagName: 'd', dagRunId: 'r', attemptId: '0b7c-../x' }), join('/w', 'runs', '0b7c-___x'));
  });

  test('the usual folder, a filled work tree and a large folder are all removed', async () => {
    const root = mkdtempSync(join(tmpdir(), 'trellis-attempt-'));
    try {
      const usual = attemptFolder(root, 2);
      rmSync(join(usual, 'work', 'deep'), { recursive: true });
      const filled = attemptFolder(root, 2, ['a.bin', 'b.bin']);
      const large = attemptFolder(root, 100);
      await Promise.all([usual, filled, large].map((dir) => removeAttemptDir(dir)));
      for (const dir of [usual, filled, large]) assert.equal(existsSync(dir), false, dir);
      assert.deepEqual(readdirSync(join(root, 'runs')), []);
      await removeAttemptDir(usual);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
