import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { expandReferences, expandVariables, readJsonPath } from '@trellis/core';

const vars: Record<string, string> = {
  NAME: 'world',
  JSON: '{"user":{"name":"Ada","tags":["x","y"],"age":36,"admin":true,"none":null,"obj":{"k":1}},"list":[{"id":7}]}',
  EMPTY: '',
  UNI: 'héllo ✓',
};
const lookup = (name: string): string | undefined => vars[name];

describe('variable expansion', () => {
  test('plain references and unicode', () => {
    assert.equal(expandVariables('hello ${NAME}, ${UNI}!', lookup), 'hello world, héllo ✓!');
    assert.equal(expandVariables('[${EMPTY}]', lookup), '[]');
    assert.equal(expandVariables('no refs here', lookup), 'no refs here');
  });

  test('JSON paths: strings raw, other values as JSON', () => {
    assert.equal(expandVariables('${JSON.user.name}', lookup), 'Ada');
    assert.equal(expandVariables('${JSON.user.tags[1]}', lookup), 'y');
    assert.equal(expandVariables('${JSON.user.age}/${JSON.user.admin}/${JSON.user.none}', lookup), '36/true/null');
    assert.equal(expandVariables('${JSON.user.obj}', lookup), '{"k":1}');
    assert.equal(expandVariables('${JSON.list[0].id}', lookup), '7');
  });

  test('unknown names, missing paths and non-JSON values are left as written', () => {
    assert.equal(expandVariables('${MISSING} ${JSON.user.nope} ${NAME.field} ${JSON.list[5].id}', lookup), '${MISSING} ${JSON.user.nope} ${NAME.field} ${JSON.list[5].id}');
  });

  test('shell syntax passes through untouched', () => {
    assert.equal(expandVariables('${NAME:-x} ${#NAME} ${NAME/a/b} $(date) ${ NAME }', lookup), '${NAME:-x} ${#NAME} ${NAME/a/b} $(date) ${ NAME }');
  });

  test('$${ escapes a literal ${; bare $NAME only on request', () => {
    assert.equal(expandVariables('$${NAME} ${NAME}', lookup), '${NAME} world');
    assert.equal(expandVariables('$NAME and $MISSING', lookup), '$NAME and $MISSING');
    assert.equal(expandVariables('$NAME and $MISSING', lookup, { bare: true }), 'world and $MISSING');
  });

  test('a resolver receives the head and the path segments (step references)', () => {
    const seen: Array<[string, string[]]> = [];
    const out = expandReferences('${build.stdout} ${child.outputs.result} ${build.exit_code}', (head, path) => {
      seen.push([head, path]);
      return `<${head}:${path.join('/')}>`;
    });
    assert.equal(out, '<build:stdout> <child:outputs/result> <build:exit_code>');
    assert.deepEqual(seen[1], ['child', ['outputs', 'result']]);
  });

  test('readJsonPath', () => {
    assert.equal(readJsonPath('[1,[2,3]]', ['1', '0']), '2');
    assert.equal(readJsonPath('not json', ['a']), undefined);
    assert.equal(readJsonPath('{"a":1}', ['__proto__']), undefined);
  });
});
