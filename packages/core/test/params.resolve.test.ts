import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseParamsField, resolveStartParams, type ParamSpec } from '@trellis/core';

function spec(raw: unknown): ParamSpec {
  const { value, errors } = parseParamsField(raw, 'params');
  assert.deepEqual(errors, []);
  return value;
}

const typed = spec([
  { name: 'region', type: 'string', enum: ['eu', 'us'], default: 'eu' },
  { name: 'count', type: 'integer', minimum: 1, maximum: 10, default: 3 },
  { name: 'ratio', type: 'number', default: 0.5 },
  { name: 'dry', type: 'boolean', default: false },
  { name: 'day', eval: '`date +%F`' },
  { name: 'tag', pattern: '^v\\d+$' },
  { name: 'token', required: true },
]);

const values = (result: ReturnType<typeof resolveStartParams>): Record<string, string> => {
  assert.ok(result.ok, JSON.stringify(result));
  return Object.fromEntries(result.params.map((p) => [p.name, p.value]));
};

describe('resolving typed params', () => {
  test('named JSON object: coerced, defaults applied, eval templates marked, declaration order', () => {
    const result = resolveStartParams(typed, JSON.stringify({ token: 's3', dry: 'TRUE', count: '7', ratio: 2 }));
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

  test('a supplied value replaces an eval template; an eval template wins over a literal default', () => {
    const both = spec([{ name: 'since', eval: '$(date +%F)', default: '2026-01-01' }]);
    assert.deepEqual(resolveStartParams(both, undefined), { ok: true, params: [{ name: 'since', value: '$(date +%F)', evaluate: true }] });
    assert.deepEqual(resolveStartParams(both, '{"since":"2025-12-31"}'), { ok: true, params: [{ name: 'since', value: '2025-12-31' }] });
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

  test('integer and number coercion: decimal text only, safe integers, finite numbers', () => {
    const ok = (raw: Record<string, unknown>): Record<string, string> => values(resolveStartParams(typed, JSON.stringify({ token: 't', ...raw })));
    assert.equal(ok({ count: ' 5 ' }).count, '5');
    assert.equal(ok({ count: '+07' }).count, '7');
    assert.equal(ok({ count: 4.0 }).count, '4');
    assert.equal(ok({ ratio: '1e-3' }).ratio, '0.001');
    assert.equal(ok({ ratio: '.5' }).ratio, '0.5');
    assert.equal(ok({ ratio: '-2.' }).ratio, '-2');
    const bad = (raw: Record<string, unknown>): string[] => {
      const result = resolveStartParams(typed, JSON.stringify({ token: 't', ...raw }));
      return result.ok ? [] : result.errors;
    };
    assert.deepEqual(bad({ count: 4.5 }), ['params.count: must be an integer, got 4.5']);
    assert.deepEqual(bad({ count: true }), ['params.count: must be an integer, got true']);
    assert.deepEqual(bad({ count: '0x10' }), ['params.count: must be an integer, got "0x10"']);
    assert.deepEqual(bad({ count: '9007199254740993' }), ['params.count: must be an integer between -9007199254740991 and 9007199254740991, got "9007199254740993"']);
    assert.deepEqual(bad({ ratio: '0x10' }), ['params.ratio: must be a number, got "0x10"']);
    assert.deepEqual(bad({ ratio: 'Infinity' }), ['params.ratio: must be a number, got "Infinity"']);
    assert.deepEqual(bad({ ratio: '1,5' }), ['params.ratio: must be a number, got "1,5"']);
    assert.deepEqual(bad({ dry: 1 }), ['params.dry: must be a boolean (true or false), got 1']);
    assert.deepEqual(bad({ count: 0 }), ['params.count: must be >= 1, got 0']);
    assert.deepEqual(bad({ count: 11 }), ['params.count: must be <= 10, got 11']);
    assert.deepEqual(bad({ region: 'EU' }), ['params.region: must be one of "eu", "us", got "EU"']);
  });

  test('blank values and null take the default; required needs a non-blank value', () => {
    assert.deepEqual(values(resolveStartParams(typed, JSON.stringify({ token: 't', count: '', dry: null, tag: '', region: ' ' }))), {
      region: 'eu',
      count: '3',
      ratio: '0.5',
      dry: 'false',
      day: '`date +%F`',
      tag: '',
      token: 't',
    });
    assert.deepEqual(resolveStartParams(typed, JSON.stringify({ token: '  ' })), { ok: false, errors: ['params.token: is required'] });
    assert.deepEqual(values(resolveStartParams(spec([{ name: 'token', required: true, default: 'dflt' }]), undefined)), { token: 'dflt' });
  });

  test('typed specs reject extra positional values; additionalProperties: true accepts extra names', () => {
    assert.deepEqual(resolveStartParams(typed, JSON.stringify(['x', 'token=t'])), { ok: false, errors: ['params[0]: unexpected positional value "x" (this DAG takes only named params)'] });
    const open = spec({ type: 'object', additionalProperties: true, properties: { a: { type: 'integer', default: 1 } } });
    assert.deepEqual(resolveStartParams(open, '{"a":"2","EXTRA":"x"}'), { ok: true, params: [{ name: 'a', value: '2' }, { name: 'EXTRA', value: 'x' }] });
    const closed = spec({ type: 'object', properties: { a: { type: 'integer', default: 1 } } });
    assert.deepEqual(resolveStartParams(closed, '{"EXTRA":"x"}'), { ok: false, errors: ['params.EXTRA: unknown parameter (declared: a)'] });
  });

  test('shell-style text and mixed arrays work for typed specs too', () => {
    assert.equal(values(resolveStartParams(typed, 'token=t count=9 region="us"')).count, '9');
    assert.deepEqual(values(resolveStartParams(typed, JSON.stringify(['token=t', { count: 2 }, { dry: true }]))), {
      region: 'eu',
      count: '2',
      ratio: '0.5',
      dry: 'true',
      day: '`date +%F`',
      tag: '',
      token: 't',
    });
  });
});

describe('reserved names', () => {
  test('undeclared params may not set process or service variables; declared ones may', () => {
    const legacy = parseParamsField('WHO=x LC_MESSAGES=C', 'params').value;
    for (const name of ['PATH', 'HOME', 'DAG_RUN_ID', 'SVC_TOKEN', 'LD_PRELOAD', 'BASH_ENV', 'ITEM', 'JAVA_TOOL_OPTIONS', 'GCONV_PATH', 'PERL5DB', 'GIT_SSH_COMMAND', 'GIT_EXEC_PATH', 'ZDOTDIR', 'PYTHONWARNINGS', 'PYTHONBREAKPOINT']) {
      const result = resolveStartParams(legacy, JSON.stringify({ [name]: 'x' }));
      assert.equal(result.ok, false, name);
      if (!result.ok) assert.match(result.errors.join(), new RegExp(`^params\\.${name}: is a reserved variable name`));
    }
    const declared = resolveStartParams(legacy, JSON.stringify({ LC_MESSAGES: 'POSIX', PATHS: 'fine' }));
    assert.deepEqual(declared, { ok: true, params: [{ name: 'WHO', value: 'x' }, { name: 'LC_MESSAGES', value: 'POSIX' }, { name: 'PATHS', value: 'fine' }] });
  });
});

describe('resolving legacy params', () => {
  const legacy = spec('first KEY=default');

  test('positional arrays, named strings, and extra values accepted in order', () => {
    assert.deepEqual(resolveStartParams(legacy, JSON.stringify(['one', 'KEY=k', 'two', 3, false])), {
      ok: true,
      params: [
        { name: '1', value: 'one' },
        { name: 'KEY', value: 'k' },
        { name: '2', value: 'two' },
        { name: '3', value: '3' },
        { name: '4', value: 'false' },
      ],
    });
  });

  test('shell text as sent by the CLI, as a JSON string, or as a bare JSON scalar', () => {
    const expected = { ok: true, params: [{ name: '1', value: 'first' }, { name: 'KEY', value: 'with space' }, { name: 'EXTRA', value: '1' }] };
    assert.deepEqual(resolveStartParams(legacy, 'KEY="with space" EXTRA=1'), expected);
    assert.deepEqual(resolveStartParams(legacy, JSON.stringify('KEY="with space" EXTRA=1')), expected);
    assert.deepEqual(resolveStartParams(legacy, '42'), { ok: true, params: [{ name: '1', value: '42' }, { name: 'KEY', value: 'default' }] });
  });

  test('named positional values, defaults when nothing is sent', () => {
    assert.deepEqual(resolveStartParams(legacy, '{"1":"uno","KEY":7}'), { ok: true, params: [{ name: '1', value: 'uno' }, { name: 'KEY', value: '7' }] });
    for (const empty of [undefined, '', '  ', 'null', '{}', '[]']) {
      assert.deepEqual(resolveStartParams(legacy, empty), { ok: true, params: [{ name: '1', value: 'first' }, { name: 'KEY', value: 'default' }] }, String(empty));
    }
    assert.deepEqual(resolveStartParams({ defs: [] }, '{"A":"1"}'), { ok: true, params: [{ name: 'A', value: '1' }] });
  });

  test('KEY= sets an empty value, as in a shell', () => {
    assert.deepEqual(resolveStartParams(legacy, 'KEY= ""'), { ok: true, params: [{ name: '1', value: '' }, { name: 'KEY', value: '' }] });
  });

  test('extra names must be usable as variable names', () => {
    assert.deepEqual(resolveStartParams(legacy, '{"bad-name":"x"}'), { ok: false, errors: ['params.bad-name: is not a valid parameter name'] });
  });
});

describe('malformed start input', () => {
  test('is an error list, never an exception', () => {
    assert.deepEqual(resolveStartParams(typed, JSON.stringify({ token: { deep: 1 } })), { ok: false, errors: ['params.token: must be a string, number or boolean', 'params.token: is required'] });
    assert.deepEqual(resolveStartParams(typed, JSON.stringify([[1], { a: 1, b: 2 }, { token: [] }])), {
      ok: false,
      errors: ['params[0]: must be a string, number, boolean or a single NAME: value map', 'params[1]: must be a string, number, boolean or a single NAME: value map', 'params[2].token: must be a string, number or boolean', 'params.token: is required'],
    });
    assert.deepEqual(resolveStartParams(typed, 'token="unterminated'), { ok: false, errors: ['params: has an unterminated quote', 'params.token: is required'] });
    assert.equal(resolveStartParams(typed, '{"token": "t",').ok, false);
  });
});
