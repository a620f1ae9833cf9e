import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { formatDefaultParams, paramNames, parseParamsField, renderParamDefs, resolveStartParams, type ParamSpec } from '@trellis/core';

function spec(raw: unknown): ParamSpec {
  const { value, errors } = parseParamsField(raw, 'params');
  assert.deepEqual(errors, []);
  return value;
}

describe('defaultParams', () => {
  test('name="value" pairs, positional values bare and in place, quotes and backslashes escaped', () => {
    const legacy = spec('first "second word" KEY=value QUOTED="a \\"b\\" c" PATH=C:\\\\tmp EMPTY=');
    assert.deepEqual(legacy.defs.find((d) => d.name === 'PATH')?.default, 'C:\\\\tmp');
    assert.equal(formatDefaultParams(legacy), '"first" "second word" KEY="value" QUOTED="a \\"b\\" c" PATH="C:\\\\\\\\tmp" EMPTY=""');
    assert.deepEqual(paramNames(legacy), ['1', '2', 'KEY', 'QUOTED', 'PATH', 'EMPTY']);
  });

  test('typed literals print as text; eval-only params print empty, never the template', () => {
    const typed = spec([
      { name: 'count', type: 'integer', default: 3 },
      { name: 'dry', type: 'boolean', default: false },
      { name: 'day', eval: '`date +%F`' },
      { name: 'since', eval: '$(date +%F)', default: '2026-01-01' },
      { name: 'note', default: 'say "hi"' },
    ]);
    assert.equal(formatDefaultParams(typed), 'count="3" dry="false" day="" since="2026-01-01" note="say \\"hi\\""');
    assert.equal(formatDefaultParams({ defs: [] }), '');
  });

  test('sent back as a start request, defaultParams reproduces the defaults (and keeps eval-only params evaluated)', () => {
    const legacy = spec(['first', 'KEY=a "quoted" \\ value', { OTHER: 'x y' }]);
    const legacyResult = resolveStartParams(legacy, formatDefaultParams(legacy));
    assert.deepEqual(legacyResult, resolveStartParams(legacy, undefined));
    const typed = spec([{ name: 'count', type: 'integer', default: 3 }, { name: 'day', eval: '`date +%F`' }, { name: 'who', default: 'Ada "A" L' }]);
    assert.deepEqual(resolveStartParams(typed, formatDefaultParams(typed)), {
      ok: true,
      params: [
        { name: 'count', value: '3' },
        { name: 'day', value: '`date +%F`', evaluate: true },
        { name: 'who', value: 'Ada "A" L' },
      ],
    });
  });
});

describe('paramDefs', () => {
  test('contract fields only, literal defaults only, absent keys omitted', () => {
    const typed = spec([
      { name: 'region', type: 'string', enum: ['eu', 'us'], default: 'eu', description: 'Where', required: true },
      { name: 'count', type: 'integer', minimum: 1, maximum: 10, default: 3 },
      { name: 'tag', pattern: '^v\\d+$' },
      { name: 'day', eval: '`date +%F`' },
    ]);
    assert.deepEqual(renderParamDefs(typed), [
      { name: 'region', type: 'string', description: 'Where', default: 'eu', enum: ['eu', 'us'] },
      { name: 'count', type: 'integer', default: 3, minimum: 1, maximum: 10 },
      { name: 'tag', type: 'string', pattern: '^v\\d+$' },
      { name: 'day', type: 'string' },
    ]);
  });

  test('legacy params render as string defs, positional ones under their generated names', () => {
    assert.deepEqual(renderParamDefs(spec('one KEY=v')), [
      { name: '1', type: 'string', default: 'one' },
      { name: 'KEY', type: 'string', default: 'v' },
    ]);
  });

  test('rendered payloads are copies: mutating them leaves the spec alone', () => {
    const typed = spec([{ name: 'region', enum: ['eu', 'us'] }]);
    const [def] = renderParamDefs(typed);
    def?.enum?.push('asia');
    assert.deepEqual(typed.defs[0]?.enum, ['eu', 'us']);
  });
});
