import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RunStatus } from '@trellis/core';
import { MemoryReporter, runDag } from '@trellis/engine';
import { cleanupRuns, nodeOf, parse, readLog, runYaml, tempDir } from './support/run-yaml.js';

after(cleanupRuns);

const hostEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/home/tester' };

/** Values that run a command when a shell parses them as code: each would create `marker`. */
function hostile(marker: string): string[] {
  return [`x; touch ${marker}`, `$(touch ${marker})`, `\`touch ${marker}\``, `"; touch ${marker}; echo "`, `'; touch ${marker}; echo '`, `x\ntouch ${marker}`];
}

const yamlWith = (command: string): string => `params: "WHO=nobody"\nsteps:\n  - name: s\n    command: ${JSON.stringify(command)}\n`;

describe('params in shell commands are data, never code', () => {
  for (const [label, command, expected] of [
    ['unquoted', 'printf "%s|" hello ${WHO}', (v: string) => `hello|${v.split(/[ \t\n]+/).join('|')}|`],
    ['inside double quotes', 'printf "%s" "hello ${WHO}"', (v: string) => `hello ${v}`],
    ['inside single quotes', "printf '%s' 'hello ${WHO}'", (v: string) => `hello ${v}`],
    ['inside $(...) in double quotes', 'printf "%s" "$(printf \'%s\' "${WHO}")"', (v: string) => v.replace(/\n+$/, '')],
  ] as const) {
    test(`a hostile param substituted ${label} is printed, not run`, async () => {
      const dir = tempDir();
      for (const value of hostile(join(dir, 'pwned'))) {
        const result = await runYaml(yamlWith(command), { hostEnv, paramsJson: JSON.stringify({ WHO: value }) });
        assert.equal(result.status, RunStatus.Success, value);
        assert.equal(existsSync(join(dir, 'pwned')), false, `${label}: ${JSON.stringify(value)} ran a command`);
        assert.equal(readLog(nodeOf(result, 's').stdout), expected(value), value);
      }
    });
  }

  test('a script, a command list and a precondition take the value as data too', async () => {
    const dir = tempDir();
    const marker = join(dir, 'pwned');
    const yaml = [
      'params: "WHO=nobody"',
      'steps:',
      '  - name: script',
      '    script: |',
      '      echo "script ${WHO}"',
      '  - name: list',
      '    command: ["echo one ${WHO}", "echo two ${WHO}"]',
      '  - name: guarded',
      '    preconditions: [{condition: "test -n \\"${WHO}\\""}, {condition: "${WHO}", expected: "re:.*"}]',
      '    command: echo guarded',
      '',
    ].join('\n');
    const value = `x; touch ${marker}`;
    const result = await runYaml(yaml, { hostEnv, paramsJson: JSON.stringify({ WHO: value }) });
    assert.equal(result.status, RunStatus.Success);
    assert.equal(existsSync(marker), false);
    assert.equal(readLog(nodeOf(result, 'script').stdout), `script ${value}\n`);
    assert.equal(readLog(nodeOf(result, 'list').stdout), `one ${value}\ntwo ${value}\n`);
    assert.equal(readLog(nodeOf(result, 'guarded').stdout), 'guarded\n');
  });

  test('a step output read with ${NAME.path} is data in a later command', async () => {
    const dir = tempDir();
    const marker = join(dir, 'pwned');
    const json = JSON.stringify({ name: `$(touch ${marker})` });
    const yaml = `steps:\n  - name: produce\n    command: printf '%s' '${json}'\n    output: OUT\n  - name: consume\n    command: echo "name=\${OUT.name}"\n`;
    const result = await runYaml(yaml, { hostEnv });
    assert.equal(result.status, RunStatus.Success);
    assert.equal(existsSync(marker), false);
    assert.equal(readLog(nodeOf(result, 'consume').stdout), `name=$(touch ${marker})\n`);
  });

  test('an apostrophe in a comment changes no quoting: the value is printed exactly', async () => {
    const yaml = ['params: "WHO=nobody"', 'steps:', '  - name: s', '    script: |', "      # don't", '      echo "hi ${WHO}"', ''].join('\n');
    const result = await runYaml(yaml, { hostEnv, paramsJson: JSON.stringify({ WHO: 'bob' }) });
    assert.equal(result.status, RunStatus.Success);
    assert.equal(readLog(nodeOf(result, 's').stdout), 'hi bob\n');
  });

  test('an unquoted heredoc expands the value as data; a quoted one keeps the reference as written', async () => {
    const marker = join(tempDir(), 'pwned');
    const yaml = ['params: "WHO=nobody"', 'steps:', '  - name: s', '    script: |', '      cat <<EOF', "      it's ${WHO}", '      EOF', "      cat <<'EOF'", "      it's ${WHO}", '      EOF', "      echo 'after ${WHO}'", ''].join('\n');
    const value = `'; touch ${marker}; echo '`;
    const result = await runYaml(yaml, { hostEnv, paramsJson: JSON.stringify({ WHO: value }) });
    assert.equal(result.status, RunStatus.Success);
    assert.equal(existsSync(marker), false);
    assert.equal(readLog(nodeOf(result, 's').stdout), `it's ${value}\nit's \${WHO}\nafter ${value}\n`);
  });

  test('a non-shell interpreter still gets the value substituted as text', async () => {
    const result = await runYaml('params: "WHO=world"\nsteps:\n  - name: s\n    command: node\n    script: console.log("hi ${WHO}")\n', { hostEnv });
    assert.equal(readLog(nodeOf(result, 's').stdout), 'hi world\n');
  });
});

describe('reserved names', () => {
  test('an undeclared param named PATH or DAG_RUN_ID fails the run before any step', async () => {
    const evil = tempDir();
    mkdirSync(join(evil, 'bin'));
    writeFileSync(join(evil, 'bin', 'echo'), `#!/bin/sh\ntouch ${join(evil, 'pwned')}\n`, { mode: 0o755 });
    const { dag } = parse('steps:\n  - {name: s, command: echo "$DAG_RUN_ID"}\n');
    for (const param of [{ name: 'PATH', value: `${join(evil, 'bin')}:/usr/bin:/bin` }, { name: 'DAG_RUN_ID', value: 'spoofed' }]) {
      const logDir = tempDir();
      const result = await runDag({
        dag,
        params: [param],
        identity: { dagName: dag.name, dagRunId: 'run-1', attemptId: 'a1', rootDagRunName: dag.name, rootDagRunId: 'run-1', parentDagRunName: '', parentDagRunId: '' },
        logDir,
        reporter: new MemoryReporter(),
        hostEnv,
      }).done;
      assert.equal(result.status, RunStatus.Failed);
      assert.match(result.snapshot.error, new RegExp(`param ${param.name}: reserved`));
      assert.equal(nodeOf(result, 's').status, 0, 'no step ran');
      assert.equal(existsSync(join(evil, 'pwned')), false);
    }
  });

  test('a declared param may use a reserved name: the DAG chose it', async () => {
    const result = await runYaml('params: "LC_MESSAGES=C"\nsteps:\n  - {name: s, command: echo "$LC_MESSAGES"}\n', { hostEnv, paramsJson: JSON.stringify({ LC_MESSAGES: 'POSIX' }) });
    assert.equal(readLog(nodeOf(result, 's').stdout), 'POSIX\n');
  });
});
