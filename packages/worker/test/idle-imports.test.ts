import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/** The ES modules a fresh Node process resolves to import `specifier`, from this package's folder and sources. */
function modulesLoadedBy(specifier: string): string[] {
  const out = execFileSync(process.execPath, ['--conditions=source', '--import', 'tsx', join(import.meta.dirname, 'fixtures', 'loaded-modules.mjs'), specifier], {
    cwd: join(import.meta.dirname, '..'),
    encoding: 'utf8',
    // A hook that never answers would hold the test: it fails instead.
    timeout: 60_000,
  });
  return JSON.parse(out) as string[];
}

describe("the worker daemon's entry", () => {
  // An idle worker's resident memory is what it has imported: zod alone holds 8 MB of it. The
  // engine, and with it the DAG model's yaml and zod, loads with the first task (EngineHost).
  // A value import of the engine from a module the entry reaches (24d9199's BatchWindow in the
  // report buffer, re-exported here) took an idle worker from 56 to 63 MB.
  test('loads neither the engine nor the DAG model, yaml or zod', () => {
    const loaded = modulesLoadedBy('@trellis/worker');
    assert.ok(
      loaded.some((url) => url.includes('/packages/worker/src/daemon.ts')),
      `the loader hook saw the daemon: ${loaded.length} modules`,
    );
    const heavy = loaded.filter((url) => /\/packages\/engine\/|\/packages\/core\/src\/index\.ts$|\/node_modules\/(zod|yaml)\//.test(url));
    assert.deepEqual(heavy, []);
  });
});
