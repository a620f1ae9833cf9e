import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { expandForShell, expandReferences, expandVariables, readJsonPath } from '@trellis/core';

const vars: Record<string, string> = {
  NAME: 'world',
  JSON: '{"user":{"name":"Ada","tags":["x","y"],"age":36,"pi":3.5,"admin":true,"off":false,"none":null,"obj":{"k":1},"empty":"","ünï":"ok","a-b":"dash"},"list":[{"id":7},[1,2]]}',
  ARR: '["a",{"b":[null,"deep"]}]',
  NUM: '42',
  STR: '"quoted json string"',
  EMPTY: '',
  UNI: 'héllo ✓ 🌍',
  REF: '${NAME}',
  '1': 'first positional',
};
const lookup = (name: string): string | undefined => (Object.hasOwn(vars, name) ? vars[name] : undefined);
const expand = (text: string): string => expandVariables(text, lookup);

describe('${NAME} references', () => {
  test('plain values, empty values and unicode', () => {
    assert.equal(expand('hello ${NAME}, ${UNI}!'), 'hello world, héllo ✓ 🌍!');
    assert.equal(expand('[${EMPTY}]'), '[]');
    assert.equal(expand('${NAME}${NAME}'), 'worldworld');
    assert.equal(expand('no refs here, just $ and { }'), 'no refs here, just $ and { }');
    assert.equal(expand(''), '');
  });

  test('positional params by number', () => {
    assert.equal(expand('${1} / ${2}'), 'first positional / ${2}');
  });

  test('one pass: a value that looks like a reference is not expanded again', () => {
    assert.equal(expand('${REF}'), '${NAME}');
  });

  test('unknown names are left exactly as written', () => {
    assert.equal(expand('${MISSING} and ${missing.path[0]}'), '${MISSING} and ${missing.path[0]}');
    assert.equal(expand('${toString} ${__proto__} ${constructor.name}'), '${toString} ${__proto__} ${constructor.name}');
  });

  test('shell syntax that is not a reference passes through untouched', () => {
    for (const text of ['${NAME:-x}', '${#NAME}', '${NAME/a/b}', '$(date)', '${ NAME }', '${NAME', '${}', '${NAME.}', '${.x}', '${NAME[x]}', '${NAME[-1]}', '${9x}', '$', '${', '}']) {
      assert.equal(expand(text), text);
    }
  });

  test('nested braces: the inner reference expands, the outer text stays', () => {
    assert.equal(expand('${A${NAME}}'), '${Aworld}');
    assert.equal(expand('${${NAME}}'), '${world}');
    assert.equal(expand('{${NAME}}'), '{world}');
  });
});

describe('JSON paths', () => {
  test('strings come out raw, everything else as JSON', () => {
    assert.equal(expand('${JSON.user.name}'), 'Ada');
    assert.equal(expand('${JSON.user.tags[1]} ${JSON.user.tags.0}'), 'y x');
    assert.equal(expand('${JSON.user.age}/${JSON.user.pi}/${JSON.user.admin}/${JSON.user.off}/${JSON.user.none}'), '36/3.5/true/false/null');
    assert.equal(expand('${JSON.user.obj} ${JSON.user.tags}'), '{"k":1} ["x","y"]');
    assert.equal(expand('[${JSON.user.empty}]'), '[]');
    assert.equal(expand('${JSON.list[0].id} ${JSON.list[1][1]}'), '7 2');
    assert.equal(expand('${ARR[1].b[1]} ${ARR[1].b[0]}'), 'deep null');
    assert.equal(expand('${JSON.user.ünï} ${JSON.user.a-b}'), 'ok dash');
  });

  test('a value without a path is the value itself, JSON or not', () => {
    assert.equal(expand('${JSON}'), vars.JSON);
    assert.equal(expand('${STR} ${NUM}'), '"quoted json string" 42');
  });

  test('missing paths, out-of-range indexes and non-JSON values are left as written', () => {
    for (const text of ['${JSON.user.nope}', '${JSON.list[5].id}', '${NAME.field}', '${NUM.x}', '${STR.length}', '${JSON.user.tags.length}', '${JSON.user.name.first}', '${JSON.user.none.x}', '${JSON.user.__proto__}', '${JSON.user.tags[1x]}']) {
      assert.equal(expand(text), text);
    }
  });

  test('readJsonPath directly', () => {
    assert.equal(readJsonPath('[1,[2,3]]', ['1', '0']), '2');
    assert.equal(readJsonPath('{"a":{"b":"c"}}', []), '{"a":{"b":"c"}}');
    assert.equal(readJsonPath('"text"', []), 'text');
    assert.equal(readJsonPath('not json', ['a']), undefined);
    assert.equal(readJsonPath('{"a":1}', ['__proto__']), undefined);
    assert.equal(readJsonPath('{"a":1}', ['hasOwnProperty']), undefined);
    assert.equal(readJsonPath('[1,2]', ['length']), undefined);
  });
});

describe('escapes and bare $NAME', () => {
  test('$${ writes a literal ${', () => {
    assert.equal(expand('$${NAME} ${NAME}'), '${NAME} world');
    assert.equal(expand('$${'), '${');
    assert.equal(expand('$$${NAME}'), '$${NAME}');
    assert.equal(expand('$${NAME.x[0]} $${ $${'), '${NAME.x[0]} ${ ${');
  });

  test('bare $NAME is left for the shell unless asked for', () => {
    assert.equal(expand('$NAME and $MISSING and $$ and $1'), '$NAME and $MISSING and $$ and $1');
    assert.equal(expandVariables('$NAME and $MISSING, $NAME_x', lookup, { bare: true }), 'world and $MISSING, $NAME_x');
    assert.equal(expandVariables('$$NAME costs $5', lookup, { bare: true }), '$NAME costs $5');
    assert.equal(expandVariables('$NAME.x ${NAME}', lookup, { bare: true }), 'world.x world');
  });
});

describe('a resolver for step references', () => {
  const steps: Record<string, Record<string, string>> = {
    build: { stdout: '/logs/build.out', stderr: '/logs/build.err', exit_code: '0' },
    child: { 'outputs.result': 'done', 'outputs.count': '3' },
  };
  const resolver = (head: string, path: string[]): string | undefined => steps[head]?.[path.join('.')];

  test('receives the head and the path segments', () => {
    assert.equal(expandReferences('${build.stdout} ${build.stderr} ${build.exit_code}', resolver), '/logs/build.out /logs/build.err 0');
    assert.equal(expandReferences('${child.outputs.result}=${child.outputs.count}', resolver), 'done=3');
    assert.equal(expandReferences('${child.outputs.missing} ${nobody.stdout}', resolver), '${child.outputs.missing} ${nobody.stdout}');
    const seen: Array<[string, string[]]> = [];
    expandReferences('${a} ${b.c[2].d} ${1}', (head, path) => {
      seen.push([head, path]);
      return undefined;
    });
    assert.deepEqual(seen, [['a', []], ['b', ['c', '2', 'd']], ['1', []]]);
  });

  test('bare references reach the resolver with an empty path', () => {
    assert.equal(expandReferences('$build', (head, path) => `${head}:${path.length}`, { bare: true }), 'build:0');
  });
});

describe('expandForShell', () => {
  const forShell = (text: string): { text: string; bound: string[] } => {
    const bound: string[] = [];
    const out = expandForShell(text, (head, path) => (path.length === 0 ? lookup(head) : undefined), (value) => {
      bound.push(value);
      return `V${bound.length - 1}`;
    });
    return { text: out, bound };
  };

  test('a resolved reference becomes a variable reference in every quoting context', () => {
    assert.deepEqual(forShell('echo ${NAME}'), { text: 'echo ${V0}', bound: ['world'] });
    assert.deepEqual(forShell('echo "a ${NAME} b"'), { text: 'echo "a ${V0} b"', bound: ['world'] });
    assert.deepEqual(forShell("echo 'a ${NAME} b'"), { text: `echo 'a '"\${V0}"' b'`, bound: ['world'] });
    assert.deepEqual(forShell("echo $'a ${NAME}'"), { text: `echo $'a '"\${V0}"$''`, bound: ['world'] });
    assert.deepEqual(forShell(`echo "$(echo '\${NAME}')" '\${NUM}'`), { text: `echo "$(echo ''"\${V0}"'')" ''"\${V1}"''`, bound: ['world', '42'] });
    assert.deepEqual(forShell("echo \\'${NAME}"), { text: "echo \\'${V0}", bound: ['world'] });
  });

  test('escapes, unresolved references and other $ forms stay for the shell', () => {
    assert.deepEqual(forShell('echo $${NAME} ${MISSING} ${NAME:-x} $NAME $(date)'), { text: 'echo ${NAME} ${MISSING} ${NAME:-x} $NAME $(date)', bound: [] });
  });

  test('a comment is no quoting context: its apostrophes open nothing, its references stay as written', () => {
    assert.deepEqual(forShell(`# don't\necho "hi \${NAME}"`), { text: `# don't\necho "hi \${V0}"`, bound: ['world'] });
    assert.deepEqual(forShell(`echo a; # it's \${NAME}\necho '\${NUM}'`), { text: `echo a; # it's \${NAME}\necho ''"\${V0}"''`, bound: ['42'] });
    assert.deepEqual(forShell(`x=$(echo a # it's\n) && echo \${NAME}`), { text: `x=$(echo a # it's\n) && echo \${V0}`, bound: ['world'] });
  });

  test('a # inside a word or inside quotes starts no comment', () => {
    assert.deepEqual(forShell(`echo "it's # not a comment \${NAME}"`), { text: `echo "it's # not a comment \${V0}"`, bound: ['world'] });
    assert.deepEqual(forShell(`echo a#'\${NAME}' \${NUM}#x $((16#ff)) '\${NAME}'`), { text: `echo a#''"\${V0}"'' \${V1}#x $((16#ff)) ''"\${V2}"''`, bound: ['world', '42', 'world'] });
  });

  test('an unquoted heredoc body expands references without quote juggling, up to its delimiter', () => {
    assert.deepEqual(forShell(`cat <<EOF\nit's \${NAME} "\${NUM}"\nEOF\necho '\${NAME}'`), { text: `cat <<EOF\nit's \${V0} "\${V1}"\nEOF\necho ''"\${V2}"''`, bound: ['world', '42', 'world'] });
    assert.deepEqual(forShell(`cat <<A <<B; echo it\\'s\nit's \${NAME}\nA\n$(echo 'x') \${NUM}\nB\necho '\${NAME}'`), { text: `cat <<A <<B; echo it\\'s\nit's \${V0}\nA\n$(echo 'x') \${V1}\nB\necho ''"\${V2}"''`, bound: ['world', '42', 'world'] });
    assert.deepEqual(forShell(`echo $((1<<2)) '\${NAME}' <<<"it's"`), { text: `echo $((1<<2)) ''"\${V0}"'' <<<"it's"`, bound: ['world'] });
  });

  test('a quoted heredoc body keeps references as written, as the shell keeps $NAME there', () => {
    for (const delimiter of [`'EOF'`, `"EOF"`, `\\EOF`, `E"O"F`]) {
      assert.deepEqual(forShell(`cat << ${delimiter}\nit's \${NAME}\nEOF\necho '\${NUM}'`), { text: `cat << ${delimiter}\nit's \${NAME}\nEOF\necho ''"\${V0}"''`, bound: ['42'] }, delimiter);
    }
  });

  test('<<- ends the body at a delimiter line indented with tabs', () => {
    assert.deepEqual(forShell(`if true; then\n\tcat <<-EOF\n\tit's \${NAME}\n\tEOF x \${NUM}\n\t\tEOF\nfi\necho '\${NUM}'`), { text: `if true; then\n\tcat <<-EOF\n\tit's \${V0}\n\tEOF x \${V1}\n\t\tEOF\nfi\necho ''"\${V2}"''`, bound: ['world', '42', '42'] });
    assert.deepEqual(forShell(`cat <<EOF\n\tEOF\nit's \${NAME}\nEOF`), { text: `cat <<EOF\n\tEOF\nit's \${V0}\nEOF`, bound: ['world'] });
  });
});
