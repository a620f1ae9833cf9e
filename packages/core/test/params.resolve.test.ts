import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseParamsField, resolveStartParams } from '@trellis/core';

const typed = parseParamsField(
  [
    { name: 'region', type: 'string', enum: ['eu', 'us'], default: 'eu' },
    { name: 'count', type: 'integer', minimum: 1, maximum: 10, default: 3 },
    { name: 'ratio', type: 'number', default: 0.5 },
    { name: 'dry', type: 'boolean', default: false },
    { name: 'day', eval: '`date +%F`' },
    { name: 'tag', pattern: '^v\\d+$' },
    { name: 'token', required: true },
  ],
  'params',
).value;

describe('resolving start-request params', () => {
  test('named JSON object: coerced, defaults applied, eval templates marked', () => {
    const result = resolveStartParams(typed, JSON.stringify({ count: '7', dry: 'TRUE', token: 's3', ratio: 2 }));
    assert.deepEqual(result, {
      ok: true,
      params: [
        { name: 'region', value: 'eu' },
        { name: 'count', value: '7' },
        { name: 'ratio', value: '2' },
        { name: 'dry', value: 'true' },
        { name: 'day', value: '`date +%F`', evaluate: true },
        { name: 'tag', value: '' },
        { name: 'token', value: 's3' },
      ],
    });
  });

  test('every problem is reported at once, each naming its param', () => {
    const result = resolveStartParams(typed, JSON.stringify({ region: 'asia', count: '4.2', ratio: 'abc', dry: 'maybe', tag: 'x1', nope: 1 }));
    assert.deepEqual(result, {
      ok: false,
      errors: [
        'params.nope: unknown parameter (declared: region, count, ratio, dry, day, tag, token)',
        'params.region: must be one of "eu", "us", got "asia"',
        'params.count: must be an integer, got "4.2"',
        'params.ratio: must be a number, got "abc"',
        'params.dry: must be a boolean (true or false), got "maybe"',
        'params.tag: must match the pattern ^v\\d+$, got "x1"',
        'params.token: is required',
      ],
    });
  });

  test('bounds are checked after coercion', () => {
    const result = resolveStartParams(typed, JSON.stringify({ count: 11, token: 't' }));
    assert.deepEqual(result, { ok: false, errors: ['params.count: must be <= 10, got 11'] });
  });

  test('legacy params: positional arrays, shell text, extra names accepted', () => {
    const legacy = parseParamsField('first KEY=default', 'params').value;
    assert.deepEqual(resolveStartParams(legacy, JSON.stringify(['one', 'KEY=k', 'two'])), {
      ok: true,
      params: [
        { name: '1', value: 'one' },
        { name: 'KEY', value: 'k' },
        { name: '2', value: 'two' },
      ],
    });
    assert.deepEqual(resolveStartParams(legacy, 'KEY="with space" EXTRA=1'), {
      ok: true,
      params: [
        { name: '1', value: 'first' },
        { name: 'KEY', value: 'with space' },
        { name: 'EXTRA', value: '1' },
      ],
    });
    assert.deepEqual(resolveStartParams(legacy, undefined), { ok: true, params: [{ name: '1', value: 'first' }, { name: 'KEY', value: 'default' }] });
  });

  test('malformed input is an error list, never an exception', () => {
    assert.deepEqual(resolveStartParams(typed, '42'), { ok: false, errors: ['params: must be a JSON object of named values or an array of positional values', 'params.token: is required'] });
    assert.deepEqual(resolveStartParams(typed, JSON.stringify({ token: { deep: 1 } })), { ok: false, errors: ['params.token: must be a string, number or boolean', 'params.token: is required'] });
    assert.deepEqual(resolveStartParams(typed, JSON.stringify(['x'])), { ok: false, errors: ['params[0]: unexpected positional value "x" (this DAG takes 0)', 'params.token: is required'] });
    assert.equal(resolveStartParams(typed, 'A="unterminated').ok, false);
  });
});
