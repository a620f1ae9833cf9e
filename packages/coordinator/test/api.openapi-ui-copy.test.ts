// The web UI's types are generated from packages/ui/openapi.json, a saved copy of the document
// this coordinator serves: a contract change must reach the UI's build (where a field the UI
// uses going away fails the type check), so the copy must be current, and so must the types
// generated from it that the repository keeps (packages/ui/src/api/schema.d.ts).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';

const UI = join(import.meta.dirname, '..', '..', 'ui');
const SAVED = join(UI, 'openapi.json');
let t: TestCoordinator;

before(async () => {
  t = await startTestCoordinator('api_openapi_ui_copy', {});
});
after(async () => t.stop());

test("the UI's saved OpenAPI document is the one served (refresh it: npm run save:openapi -w packages/ui)", async () => {
  const served: unknown = await (await fetch(`${t.coordinator.apiUrl}/openapi.json`)).json();
  const saved: unknown = JSON.parse(readFileSync(SAVED, 'utf8'));
  assert.deepEqual(saved, served);
});

test("the UI's committed types are the ones generated from the saved document (refresh them: npm run gen:api -w packages/ui)", () => {
  // Its package exports map `*.js` to `*.mjs`: the bin is found beside its package.json.
  const cli = join(dirname(createRequire(join(UI, 'package.json')).resolve('openapi-typescript/package.json')), 'bin', 'cli.js');
  const dir = mkdtempSync(join(tmpdir(), 'trellis-ui-types-'));
  try {
    const generated = join(dir, 'schema.d.ts');
    execFileSync(process.execPath, [cli, 'openapi.json', '-o', generated], { cwd: UI, stdio: 'pipe' });
    assert.ok(readFileSync(join(UI, 'src', 'api', 'schema.d.ts'), 'utf8') === readFileSync(generated, 'utf8'), 'packages/ui/src/api/schema.d.ts differs from what openapi.json generates');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
