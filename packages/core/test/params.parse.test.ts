import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { formatDefaultParams, parseParamsField, renderParamDefs } from '@trellis/core';

describe('params field forms', () => {
  test('shell-style string: positional words and named pairs with quotes', () => {
    const { value, errors } = parseParamsField('first "second word" KEY=value QUOTED="a \\"b\\" c"', 'params');
    assert.deepEqual(errors, []);
    assert.deepEqual(value.defs, [
      { name: '1', position: 0, type: 'string', default: 'first' },
      { name: '2', position: 1, type: 'string', default: 'second word' },
      { name: 'KEY', type: 'string', default: 'value' },
      { name: 'QUOTED', type: 'string', default: 'a "b" c' },
    ]);
    assert.equal(value.schema, undefined);
    assert.equal(formatDefaultParams(value), '"first" "second word" KEY="value" QUOTED="a \\"b\\" c"');
  });

  test('array of strings and single-key maps; NAME map', () => {
    const a = parseParamsField(['A=1', { B: 2 }, { C: true }, 'pos'], 'params');
    assert.deepEqual(a.errors, []);
    assert.deepEqual(a.value.defs.map((d) => [d.name, d.default]), [['A', '1'], ['B', '2'], ['C', 'true'], ['1', 'pos']]);
    const b = parseParamsField({ X: 'x', Y: 3 }, 'params');
    assert.deepEqual(b.value.defs.map((d) => [d.name, d.default]), [['X', 'x'], ['Y', '3']]);
    assert.equal(b.value.typed, undefined);
  });

  test('rich params render paramDefs and a schema; eval defaults are never evaluated', () => {
    const { value, errors } = parseParamsField(
      [
        { name: 'region', type: 'string', enum: ['eu', 'us'], default: 'eu', description: 'Where' },
        { name: 'count', type: 'integer', minimum: 1, maximum: 10, default: 3 },
        { name: 'day', eval: '`date +%F`' },
        { name: 'token', required: true },
      ],
      'params',
    );
    assert.deepEqual(errors, []);
    assert.deepEqual(renderParamDefs(value), [
      { name: 'region', type: 'string', description: 'Where', default: 'eu', enum: ['eu', 'us'] },
      { name: 'count', type: 'integer', default: 3, minimum: 1, maximum: 10 },
      { name: 'day', type: 'string' },
      { name: 'token', type: 'string' },
    ]);
    assert.deepEqual(value.schema, {
      type: 'object',
      required: ['token'],
      properties: {
        region: { type: 'string', description: 'Where', default: 'eu', enum: ['eu', 'us'] },
        count: { type: 'integer', default: 3, minimum: 1, maximum: 10 },
        day: { type: 'string' },
        token: { type: 'string' },
      },
    });
    assert.equal(formatDefaultParams(value), 'region="eu" count="3" day="" token=""');
  });

  test('inline JSON Schema', () => {
    const { value, errors } = parseParamsField(
      { type: 'object', required: ['env'], properties: { env: { type: 'string', enum: ['dev', 'prod'] }, dry: { type: 'boolean', default: false } } },
      'params',
    );
    assert.deepEqual(errors, []);
    assert.equal(value.typed, true);
    assert.deepEqual(value.schema?.required, ['env']);
    assert.deepEqual(value.defs.map((d) => d.name), ['env', 'dry']);
  });

  test('inconsistent declarations are reported with their paths', () => {
    const { errors } = parseParamsField(
      [
        { name: 'a', type: 'integer', default: 'x' },
        { name: 'b', type: 'string', pattern: '[' },
        { name: 'c', type: 'number', minimum: 5, maximum: 1 },
        { name: 'd', type: 'string', enum: ['x', 1] },
        { name: '9bad' },
        { name: 'e', colour: 'red' },
        'A=1',
        { A: 2 },
        { X: 1, Y: 2 },
        [1],
      ],
      'params',
    );
    assert.deepEqual(errors, [
      'params[0].default: must be of type integer',
      'params[1].pattern: is not a valid regular expression (Invalid regular expression: /[/: Unterminated character class)',
      'params[2]: minimum (5) is greater than maximum (1)',
      'params[3].enum[1]: must be of type string',
      'params[4].name: must be a valid identifier (letters, digits, _; not starting with a digit)',
      'params[5].colour: unknown field',
      'params[8]: a map item must have exactly one key (NAME: default), or a `name` field for a typed param',
      'params[9]: must be a string, a NAME: value map or a param object, got an array',
      'params: duplicate parameter "A"',
    ]);
  });

  test('an unterminated quote and a wrong type are errors, not exceptions', () => {
    assert.deepEqual(parseParamsField('A="open', 'params').errors, ['params: has an unterminated quote']);
    assert.deepEqual(parseParamsField(42, 'params').errors, ['params: must be a string, an array or a mapping, got a number']);
  });
});
