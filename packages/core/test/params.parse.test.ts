import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseParamsField } from '@trellis/core';

describe('params field forms', () => {
  test('shell-style string: positional words and named pairs, with both kinds of quotes', () => {
    const { value, errors } = parseParamsField(`first "second word" KEY=value QUOTED="a \\"b\\" c" SINGLE='x "y"' EMPTY= 9bad=z`, 'params');
    assert.deepEqual(errors, []);
    assert.deepEqual(value, {
      defs: [
        { name: '1', position: 0, type: 'string', default: 'first' },
        { name: '2', position: 1, type: 'string', default: 'second word' },
        { name: 'KEY', type: 'string', default: 'value' },
        { name: 'QUOTED', type: 'string', default: 'a "b" c' },
        { name: 'SINGLE', type: 'string', default: 'x "y"' },
        { name: 'EMPTY', type: 'string', default: '' },
        { name: '3', position: 2, type: 'string', default: '9bad=z' },
      ],
    });
  });

  test('array of KEY=value strings, bare strings and scalars, single-key maps', () => {
    const { value, errors } = parseParamsField(['A=1', { B: 2 }, { C: true }, { D: null }, 'pos', 7, false], 'params');
    assert.deepEqual(errors, []);
    assert.deepEqual(
      value.defs.map((d) => [d.name, d.default, d.position]),
      [['A', '1', undefined], ['B', '2', undefined], ['C', 'true', undefined], ['D', '', undefined], ['1', 'pos', 0], ['2', '7', 1], ['3', 'false', 2]],
    );
    assert.equal(value.typed, undefined);
    assert.equal(value.schema, undefined);
  });

  test('a NAME -> default map is legacy and untyped', () => {
    const { value, errors } = parseParamsField({ X: 'x', Y: 3, Z: null }, 'params');
    assert.deepEqual(errors, []);
    assert.deepEqual(value, { defs: [{ name: 'X', type: 'string', default: 'x' }, { name: 'Y', type: 'string', default: '3' }, { name: 'Z', type: 'string', default: '' }] });
  });

  test('rich params: types inferred from the default or enum, eval kept apart from the literal default', () => {
    const { value, errors } = parseParamsField(
      [
        { name: 'region', type: 'string', enum: ['eu', 'us'], default: 'eu', description: 'Where' },
        { name: 'count', minimum: 1, maximum: 10, default: 3 },
        { name: 'ratio', default: 0.5 },
        { name: 'dry', enum: [true, false] },
        { name: 'day', eval: '`date +%F`' },
        { name: 'since', eval: '$(date -d yesterday +%F)', default: '2026-01-01' },
        { name: 'token', required: true, pattern: '^t\\d+$' },
        { name: 'only' },
      ],
      'params',
    );
    assert.deepEqual(errors, []);
    assert.equal(value.typed, true);
    assert.deepEqual(value.defs, [
      { name: 'region', type: 'string', description: 'Where', default: 'eu', enum: ['eu', 'us'] },
      { name: 'count', type: 'integer', default: 3, minimum: 1, maximum: 10 },
      { name: 'ratio', type: 'number', default: 0.5 },
      { name: 'dry', type: 'boolean', enum: [true, false] },
      { name: 'day', type: 'string', eval: '`date +%F`' },
      { name: 'since', type: 'string', default: '2026-01-01', eval: '$(date -d yesterday +%F)' },
      { name: 'token', type: 'string', pattern: '^t\\d+$', required: true },
      { name: 'only', type: 'string' },
    ]);
    assert.deepEqual(value.schema, {
      type: 'object',
      required: ['token'],
      properties: {
        region: { type: 'string', description: 'Where', default: 'eu', enum: ['eu', 'us'] },
        count: { type: 'integer', default: 3, minimum: 1, maximum: 10 },
        ratio: { type: 'number', default: 0.5 },
        dry: { type: 'boolean', enum: [true, false] },
        day: { type: 'string' },
        since: { type: 'string', default: '2026-01-01' },
        token: { type: 'string', pattern: '^t\\d+$' },
        only: { type: 'string' },
      },
    });
  });

  test('a map with a `name` key is a rich param, even with nothing else', () => {
    assert.deepEqual(parseParamsField([{ name: 'foo' }], 'params').value.defs, [{ name: 'foo', type: 'string' }]);
  });

  test('rich params mixed with legacy named items: typed, and the schema covers both', () => {
    const { value, errors } = parseParamsField([{ name: 'n', type: 'integer', default: 1 }, 'MODE=fast'], 'params');
    assert.deepEqual(errors, []);
    assert.equal(value.typed, true);
    assert.deepEqual(value.schema, { type: 'object', properties: { n: { type: 'integer', default: 1 }, MODE: { type: 'string', default: 'fast' } } });
  });

  test('no schema when a positional param exists: it has no name a JSON object could carry', () => {
    const { value, errors } = parseParamsField([{ name: 'n', type: 'integer', default: 1 }, 'positional'], 'params');
    assert.deepEqual(errors, []);
    assert.equal(value.typed, true);
    assert.equal(value.schema, undefined);
    assert.deepEqual(value.defs.map((d) => d.name), ['n', '1']);
  });

  test('inline JSON Schema: properties in order, required, title as description, additionalProperties kept', () => {
    const { value, errors } = parseParamsField(
      {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        required: ['env'],
        additionalProperties: true,
        properties: { env: { type: 'string', enum: ['dev', 'prod'], title: 'Environment' }, dry: { type: 'boolean', default: false }, n: { default: 2, minimum: 0 } },
      },
      'params',
    );
    assert.deepEqual(errors, []);
    assert.equal(value.typed, true);
    assert.deepEqual(value.defs, [
      { name: 'env', type: 'string', description: 'Environment', enum: ['dev', 'prod'], required: true },
      { name: 'dry', type: 'boolean', default: false },
      { name: 'n', type: 'integer', default: 2, minimum: 0 },
    ]);
    assert.deepEqual(value.schema, {
      type: 'object',
      required: ['env'],
      additionalProperties: true,
      properties: { env: { type: 'string', description: 'Environment', enum: ['dev', 'prod'] }, dry: { type: 'boolean', default: false }, n: { type: 'integer', default: 2, minimum: 0 } },
    });
  });

  test('empty forms', () => {
    for (const raw of [undefined, null, '', '   ', [], {}]) assert.deepEqual(parseParamsField(raw, 'params'), { value: { defs: [] }, errors: [] });
  });
});

describe('params validation', () => {
  test('inconsistent rich declarations are reported with their paths', () => {
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
        { name: 'f', type: 'date' },
        { name: 'g', type: 'integer', default: 2.5 },
        { name: 'h', type: 'string', minimum: 1 },
        { name: 'i', type: 'integer', pattern: '^\\d+$' },
        { name: 'j', enum: ['a', 'b'], default: 'c' },
        { name: 'k', type: 'string', pattern: '^x', enum: ['xa', 'ya'], default: 'ya' },
        { name: 'l', type: 'integer', minimum: 0, maximum: 9, enum: [1, 20] },
        { name: 'm', enum: [] },
        { name: 'n', default: { deep: 1 } },
        {},
      ],
      'params',
    );
    assert.deepEqual(errors, [
      'params[0].default: must be of type integer',
      'params[1].pattern: is not a valid regular expression (Invalid regular expression: /[/u: Unterminated character class)',
      'params[2]: minimum (5) is greater than maximum (1)',
      'params[3].enum[1]: must be of type string',
      'params[4].name: must be a valid identifier (letters, digits, _; not starting with a digit)',
      'params[5].colour: unknown field',
      'params[8]: a map item must have exactly one key (NAME: default), or a `name` field for a typed param',
      'params[9]: must be a string, a NAME: value map or a param object, got an array',
      'params[10].type: must be string, integer, number or boolean',
      'params[11].default: must be of type integer',
      'params[12]: minimum and maximum need type integer or number',
      'params[13]: pattern needs type string',
      'params[14].default: must be one of "a", "b"',
      'params[15].enum[1]: must match the pattern ^x',
      'params[15].default: must match the pattern ^x',
      'params[16].enum[1]: must be <= 9',
      'params[17].enum: must list at least one value',
      'params[18].default: Invalid input',
      'params[19]: a map item must have exactly one key (NAME: default), or a `name` field for a typed param',
      'params: duplicate parameter "A"',
    ]);
  });

  test('legacy names and defaults are checked', () => {
    assert.deepEqual(parseParamsField({ 'bad-name': 1, ok: { x: 1 }, list: [1] }, 'params').errors, [
      'params.bad-name: "bad-name" is not a valid parameter name (letters, digits, _; not starting with a digit)',
      'params.ok: default of "ok" must be a scalar, got a mapping',
      'params.list: default of "list" must be a scalar, got an array',
    ]);
    const unsplit = parseParamsField(['A=1 B=2', 'B=3'], 'params');
    assert.deepEqual(unsplit.errors, [], 'an array item is one word, not re-split');
    assert.deepEqual(unsplit.value.defs.map((d) => d.default), ['1 B=2', '3']);
    assert.deepEqual(parseParamsField('A=1 A=2', 'params').errors, ['params: duplicate parameter "A"']);
  });

  test('JSON Schema problems name the property or keyword', () => {
    const { errors } = parseParamsField(
      {
        type: 'object',
        required: ['missing'],
        properties: { a: { type: 'array' }, b: { type: 'integer', default: 'x' }, 'c-d': { type: 'string' }, e: { type: 'string', minLength: 1 }, f: { type: 'number', minimum: 3, maximum: 2 } },
        oneOf: [],
      },
      'params',
    );
    assert.deepEqual(errors, [
      'params.properties.c-d: must be a valid identifier (letters, digits, _; not starting with a digit)',
      'params.properties.a.type: must be string, integer, number or boolean',
      'params.properties.e.minLength: unknown field',
      'params.oneOf: unknown field',
    ]);
    const second = parseParamsField({ type: 'object', required: ['missing'], properties: { b: { type: 'integer', default: 'x' }, f: { type: 'number', minimum: 3, maximum: 2 } } }, 'params');
    assert.deepEqual(second.errors, ['params.required[0]: "missing" is not a declared property', 'params.properties.b.default: must be of type integer', 'params.properties.f: minimum (3) is greater than maximum (2)']);
  });

  test('an unterminated quote and a wrong type are errors, not exceptions', () => {
    assert.deepEqual(parseParamsField('A="open', 'params').errors, ['params: has an unterminated quote']);
    assert.deepEqual(parseParamsField(42, 'params').errors, ['params: must be a string, an array or a mapping, got a number']);
    assert.deepEqual(parseParamsField(true, 'base.params').errors, ['base.params: must be a string, an array or a mapping, got a boolean']);
  });
});
