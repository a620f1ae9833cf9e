// The base configuration is stored like a DAG definition: a coordinator whose base file changes
// imports it, and every coordinator on the database parses its DAGs with it, whether or not it
// has a base file of its own.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openTestDb } from '@trellis/store/testing';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';

let withFile: TestCoordinator;
let without: TestCoordinator;
let cleanup: () => Promise<void>;
let root: string;
let basePath: string;

async function within(ms: number, what: string, check: () => boolean): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > ms) assert.fail(`${what} did not happen within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

before(async () => {
  root = mkdtempSync(join(tmpdir(), 'trellis-base-'));
  basePath = join(root, 'base.yaml');
  writeFileSync(basePath, 'description: from the base\n');
  const opened = await openTestDb('base_config');
  cleanup = opened.cleanup;
  withFile = await startTestCoordinator('base_a', { plain: 'steps:\n  - echo a\n' }, { baseConfig: basePath }, { db: opened.db, watch: true });
  without = await startTestCoordinator('base_b', {}, {}, { db: opened.second !== undefined ? await opened.second() : opened.db, watch: true });
});

after(async () => {
  await without.stop();
  await withFile.stop();
  await cleanup();
  rmSync(root, { recursive: true, force: true });
});

test('a coordinator without a base file parses with the stored base; an edit of the file re-parses every DAG everywhere', async () => {
  assert.equal(without.coordinator.index.get('plain')?.result.dag?.description, 'from the base');
  writeFileSync(basePath, 'steps:\n  - echo not allowed\n');
  await within(2000, 'the other coordinator re-parses with the new base', () =>
    (without.coordinator.index.get('plain')?.result.errors ?? []).some((e) => e.startsWith('base config: steps')),
  );
  writeFileSync(basePath, 'description: fixed\n');
  await within(2000, 'the fixed base reaches the other coordinator', () => without.coordinator.index.get('plain')?.result.dag?.description === 'fixed');
});
