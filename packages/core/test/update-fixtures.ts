// Rewrites packages/core/test/fixtures/*.expected.json from the current loader output.
// Run it only after a deliberate change, then read every changed file in the diff before
// committing: an expectation nobody reviewed tests nothing.
//   node --conditions=source --import tsx packages/core/test/update-fixtures.ts
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURE_DIR, fixtureNames, runFixture } from './fixture-runner.js';

for (const name of fixtureNames()) {
  writeFileSync(join(FIXTURE_DIR, `${name}.expected.json`), `${JSON.stringify(runFixture(name), null, 2)}\n`);
}
console.log(`wrote ${fixtureNames().length} expectations`);
