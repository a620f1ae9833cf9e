import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isValidDagFileName, isValidInlineRunName, loadDag, parseBaseConfig, validateDagName, type Dag } from '@trellis/core';

function load(text: string, fileName = 'test'): Dag {
  const result = loadDag(text, { fileName });
  assert.deepEqual(result.errors, []);
  assert.ok(result.dag);
  return result.dag;
}

describe('defaults', () => {
  const dag = load(`
smtp: {host: mail.example.com}
error_mail: {from: trellis@example.com, to: ops@example.com}
defaults:
  retry_policy: {limit: 2, interval_sec: 1, backoff: true}
  continue_on: {failure: true}
  repeat_policy: {repeat: while, exit_code: [1], limit: 3}
  timeout_sec: 60
  mail_on_error: true
  signal_on_stop: SIGINT
  env: [SHARED=1]
  preconditions: [test -d /tmp]
handler_on:
  exit: {command: echo bye}
steps:
  - name: inherits
    command: echo a
  - name: overrides
    command: echo b
    timeout_sec: 5
    signal_on_stop: SIGHUP
    env: [OWN=2]
    preconditions: [test -f x]
    retry_policy: {limit: 0}
`);
  const [inherits, overrides] = dag.steps;

  test('set-if-unset fields are applied to steps that leave them out', () => {
    assert.deepEqual(inherits?.retryPolicy, { limit: 2, intervalSec: 1, backoff: 2, exitCode: [] });
    assert.equal(inherits?.continueOn.failure, true);
    assert.equal(inherits?.repeatPolicy?.mode, 'while');
    assert.equal(inherits?.timeoutSec, 60);
    assert.equal(inherits?.mailOnError, true);
    assert.equal(inherits?.signalOnStop, 'SIGINT');
  });

  test("a step's own value wins", () => {
    assert.equal(overrides?.timeoutSec, 5);
    assert.equal(overrides?.signalOnStop, 'SIGHUP');
    assert.deepEqual(overrides?.retryPolicy, { limit: 0, intervalSec: 0, backoff: 1, exitCode: [] });
  });

  test('env and preconditions are prepended to the step\'s own', () => {
    assert.deepEqual(overrides?.env, [{ key: 'SHARED', value: '1' }, { key: 'OWN', value: '2' }]);
    assert.deepEqual(overrides?.preconditions.map((p) => p.condition), ['test -d /tmp', 'test -f x']);
  });

  test('handlers get defaults too', () => {
    assert.equal(dag.handlerOn.exit?.timeoutSec, 60);
    assert.equal(dag.handlerOn.exit?.name, 'onExit');
  });
});

describe('ordering', () => {
  test('chain: each step depends on the one before', () => {
    const dag = load('steps:\n  - echo a\n  - echo b\n  - echo c\n');
    assert.deepEqual(dag.steps.map((s) => [s.name, s.depends]), [['step_1', []], ['step_2', ['step_1']], ['step_3', ['step_2']]]);
  });

  test('graph: explicit depends, by name or id', () => {
    const dag = load('type: graph\nsteps:\n  - {name: a, id: first, command: x}\n  - {name: b, command: y, depends: first}\n  - {name: c, command: z}\n');
    assert.deepEqual(dag.steps.map((s) => s.depends), [[], ['a'], []]);
  });

  test('generated names never collide with written ones', () => {
    const dag = load('steps:\n  - echo one\n  - {name: step_1, command: echo two}\n');
    assert.deepEqual(dag.steps.map((s) => s.name), ['step_1_2', 'step_1']);
  });
});

describe('command forms', () => {
  test('string, array, multi-line script', () => {
    const dag = load('steps:\n  - echo one\n  - command: [echo a, echo b]\n  - command: |\n      echo x\n      echo y\n');
    assert.deepEqual(dag.steps.map((s) => s.commands), [['echo one'], ['echo a', 'echo b'], ['echo x\necho y\n']]);
  });
});

describe('base configuration', () => {
  const { base, errors } = parseBaseConfig('env: [A=base, B=base]\nhandler_on:\n  failure: {command: echo f}\nmax_active_steps: 3\n');

  test('inherits unset fields and merges env with the DAG last', () => {
    assert.deepEqual(errors, []);
    const result = loadDag('env: [B=dag]\nmax_active_steps: 1\nsteps: [echo]\n', { base });
    assert.deepEqual(result.dag?.env, [{ key: 'A', value: 'base' }, { key: 'B', value: 'base' }, { key: 'B', value: 'dag' }]);
    assert.equal(result.dag?.maxActiveSteps, 1);
    assert.ok(result.dag?.handlerOn.failure);
  });

  test('sub-DAGs do not inherit handlers', () => {
    const result = loadDag('steps: [echo]\n', { base, isSubDag: true });
    assert.equal(result.dag?.handlerOn.failure, undefined);
    assert.equal(result.dag?.maxActiveSteps, 3);
  });

  test('a base with steps or bad fields is refused', () => {
    assert.deepEqual(parseBaseConfig('steps: [echo]\n').errors, ['steps: a base configuration cannot define steps']);
    assert.deepEqual(parseBaseConfig('timeout_sec: soon\n').errors, ['timeout_sec: must be a non-negative integer']);
  });
});

describe('name rules', () => {
  test('file names', () => {
    assert.equal(isValidDagFileName('my_dag-1'), true);
    assert.equal(isValidDagFileName('my.dag'), false);
    assert.equal(isValidDagFileName(''), false);
  });

  test('inline run names and dag names', () => {
    assert.equal(isValidInlineRunName('a.b-c_1'), true);
    assert.equal(isValidInlineRunName('x'.repeat(41)), false);
    assert.equal(isValidInlineRunName('has space'), false);
    assert.equal(validateDagName('ok.name'), undefined);
    assert.match(validateDagName('bad name') ?? '', /only letters/);
  });
});
