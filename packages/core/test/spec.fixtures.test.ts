import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURE_DIR, fixtureNames, runFixture } from './fixture-runner.js';

describe('DAG fixture corpus', () => {
  const names = fixtureNames();

  test('the corpus holds at least 80 definitions, valid and invalid', () => {
    assert.ok(names.length >= 80, `only ${names.length} fixtures`);
    assert.ok(names.filter((n) => n.startsWith('valid-')).length >= 40);
    assert.ok(names.filter((n) => n.startsWith('invalid-')).length >= 40);
  });

  for (const name of names) {
    test(name, () => {
      const expectedPath = join(FIXTURE_DIR, `${name}.expected.json`);
      assert.ok(existsSync(expectedPath), `missing ${name}.expected.json`);
      const expected: unknown = JSON.parse(readFileSync(expectedPath, 'utf8'));
      const actual = runFixture(name) as Record<string, unknown>;
      if (name.startsWith('valid-')) assert.ok('dag' in actual, `expected a valid DAG, got ${JSON.stringify(actual)}`);
      if (name.startsWith('invalid-')) assert.ok(!('dag' in actual), 'expected validation errors');
      assert.deepEqual(actual, expected);
    });
  }
});
