// The web UI's types are generated from packages/ui/openapi.json, a saved copy of the document
// this coordinator serves: a contract change must reach the UI's build (where a field the UI
// uses going away fails the type check), so the copy must be current.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';

const SAVED = join(import.meta.dirname, '..', '..', 'ui', 'openapi.json');
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
