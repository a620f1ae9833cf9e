import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '../../..');
const committed = join(root, 'packages/core/src/protocol/generated');

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .sort();
}

describe('generated protocol types', () => {
  test('the committed types are what `npm run gen:proto` makes of protos/ today', () => {
    const fresh = mkdtempSync(join(tmpdir(), 'trellis-gen-proto-'));
    try {
      const run = spawnSync(process.execPath, [join(root, 'scripts/gen-proto.mjs'), fresh], { cwd: root, encoding: 'utf8' });
      assert.equal(run.status, 0, run.stderr);
      const files = filesUnder(fresh);
      assert.ok(files.includes('coordinator.ts'));
      assert.deepEqual(filesUnder(committed), files, 'generated files differ: run `npm run gen:proto` and commit the result');
      for (const file of files) {
        assert.equal(readFileSync(join(committed, file), 'utf8'), readFileSync(join(fresh, file), 'utf8'), `${file} is stale: run \`npm run gen:proto\` and commit the result`);
      }
    } finally {
      rmSync(fresh, { recursive: true, force: true });
    }
  });
});
