import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ExpansionLimitError, MAX_DAGS_PER_FILE, MAX_EXPANDED_VALUE_LENGTH, MAX_SPEC_BYTES, MAX_STEPS_PER_DAG, confinedPath, expandVariables, isValidDagFileName, loadDag, nameSegment, PathEscapeError } from '@trellis/core';

const steps = (n: number): string => `steps:\n${Array.from({ length: n }, (_, i) => `  - {name: s${i}, command: "true"}`).join('\n')}\n`;

describe('spec limits, each refused with an error naming the limit', () => {
  test('a spec larger than MAX_SPEC_BYTES', () => {
    const result = loadDag(`${steps(1)}# ${'x'.repeat(MAX_SPEC_BYTES)}\n`);
    assert.equal(result.dag, undefined);
    assert.match(result.errors.join('\n'), /MAX_SPEC_BYTES/);
  });

  test('more steps than MAX_STEPS_PER_DAG, as a list or a mapping; the limit itself is fine', () => {
    assert.match(loadDag(steps(MAX_STEPS_PER_DAG + 1)).errors.join('\n'), /2001 steps exceed the limit of 2000 per DAG \(MAX_STEPS_PER_DAG\)/);
    const mapping = `type: graph\nsteps:\n${Array.from({ length: MAX_STEPS_PER_DAG + 1 }, (_, i) => `  s${i}: {command: "true"}`).join('\n')}\n`;
    assert.match(loadDag(mapping).errors.join('\n'), /MAX_STEPS_PER_DAG/);
    assert.deepEqual(loadDag(steps(MAX_STEPS_PER_DAG)).errors, []);
  });

  test('more YAML documents than MAX_DAGS_PER_FILE', () => {
    const locals = Array.from({ length: MAX_DAGS_PER_FILE }, (_, i) => `name: local${i}\n${steps(1)}`);
    const result = loadDag([steps(1), ...locals].join('---\n'));
    assert.match(result.errors.join('\n'), /101 YAML documents; the limit is 100 DAGs per file \(MAX_DAGS_PER_FILE\)/);
    assert.deepEqual(loadDag([steps(1), ...locals.slice(1)].join('---\n')).errors, []);
  });

  test('a NUL character in the text or in a parsed value ("\\0") is never valid', () => {
    assert.match(loadDag('steps:\n  - echo a\u0000b\n').errors.join('\n'), /line 2: the definition contains a NUL character/);
    assert.match(loadDag('steps:\n  - name: s1\n    command: "echo \\0"\n').errors.join('\n'), /steps\[0\]\.command: must not contain a NUL character/);
    assert.match(loadDag(`${steps(1)}---\nname: "loc\\0al"\n${steps(1)}`).errors.join('\n'), /document 2: name: must not contain a NUL/);
  });

  test('an expansion past MAX_EXPANDED_VALUE_LENGTH throws before building the value', () => {
    const big = 'x'.repeat(MAX_EXPANDED_VALUE_LENGTH / 2 + 1);
    assert.throws(() => expandVariables('${A}${A}', () => big), ExpansionLimitError);
    assert.throws(() => expandVariables('${A}'.repeat(100_000), () => big), /MAX_EXPANDED_VALUE_LENGTH/);
    assert.equal(expandVariables('${A}', () => big).length, big.length);
  });

  test('DAG file names longer than 200 characters are invalid', () => {
    assert.equal(isValidDagFileName('n'.repeat(200)), true);
    assert.equal(isValidDagFileName('n'.repeat(201)), false);
  });
});

describe('paths built from names', () => {
  test('"." and ".." become names of their own; odd characters and long names are made safe', () => {
    assert.equal(nameSegment('..'), '_.');
    assert.equal(nameSegment('.'), '_');
    assert.equal(nameSegment('a/b c'), 'a_b_c');
    assert.equal(nameSegment(''), '_');
    const long = nameSegment('n'.repeat(1000));
    assert.ok(long.length <= 200 && long !== nameSegment(`${'n'.repeat(999)}m`));
  });

  test('confinedPath refuses a path outside its root', () => {
    assert.equal(confinedPath('/logs', nameSegment('..'), 'run.log'), '/logs/_./run.log');
    assert.throws(() => confinedPath('/logs', '..', 'x'), PathEscapeError);
    assert.throws(() => confinedPath('/logs', '.'), PathEscapeError);
    assert.throws(() => confinedPath('/logs', 'a/../../etc'), PathEscapeError);
  });
});
