import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeStatus, RunStatus } from '@trellis/core';
import { cleanupRuns, nodeOf, readLog, runYaml } from './support/run-yaml.js';

after(cleanupRuns);

describe('step preconditions', () => {
  test('shell conditions, value conditions, re: and negate', async () => {
    const result = await runYaml(`
type: graph
env: [MODE=nightly]
steps:
  - name: shell-met
    command: echo ran
    preconditions: [test -d /]
  - name: shell-not-met
    command: echo ran
    preconditions: [test -f /definitely/not/here]
  - name: value-met
    command: echo ran
    preconditions:
      - {condition: $MODE, expected: nightly}
  - name: regex-met
    command: echo ran
    preconditions:
      - {condition: "\`echo build-123\`", expected: "re:^build-[0-9]+$"}
  - name: negated
    command: echo ran
    preconditions:
      - {condition: $MODE, expected: nightly, negate: true}
`);
    assert.equal(nodeOf(result, 'shell-met').status, NodeStatus.Success);
    assert.equal(nodeOf(result, 'shell-not-met').status, NodeStatus.Skipped);
    assert.match(nodeOf(result, 'shell-not-met').error, /precondition not met/);
    assert.equal(nodeOf(result, 'value-met').status, NodeStatus.Success);
    assert.equal(nodeOf(result, 'regex-met').status, NodeStatus.Success);
    assert.equal(nodeOf(result, 'negated').status, NodeStatus.Skipped);
    assert.equal(readLog(nodeOf(result, 'shell-not-met').stdout), '');
    assert.equal(result.status, RunStatus.Success);
  });

  test('downstream of a skipped step is skipped, unless continue_on.skipped', async () => {
    const result = await runYaml(`
type: graph
steps:
  - {name: skipped, command: echo x, preconditions: ["false"]}
  - {name: after-skipped, command: echo x, depends: skipped}
  - {name: skipped-ok, command: echo x, preconditions: ["false"], continue_on: {skipped: true}}
  - {name: after-skipped-ok, command: echo x, depends: skipped-ok}
`);
    assert.equal(nodeOf(result, 'after-skipped').status, NodeStatus.Skipped);
    assert.equal(nodeOf(result, 'after-skipped-ok').status, NodeStatus.Success);
  });
});

describe('dependencies and continue_on', () => {
  test('a failed upstream cancels its dependents; the run fails', async () => {
    const result = await runYaml('steps:\n  - {name: a, command: exit 1}\n  - {name: b, command: echo b}\n');
    assert.equal(result.status, RunStatus.Failed);
    assert.equal(nodeOf(result, 'a').status, NodeStatus.Failed);
    assert.equal(nodeOf(result, 'b').status, NodeStatus.Cancelled);
  });

  test('continue_on failure, exit_code and output let dependents run: partial success', async () => {
    const result = await runYaml(`
type: graph
steps:
  - {name: any-failure, command: exit 1, continue_on: {failure: true}}
  - {name: after-1, command: echo ok, depends: any-failure}
  - {name: listed-code, command: exit 7, continue_on: {exit_code: [7]}}
  - {name: after-2, command: echo ok, depends: listed-code}
  - {name: output-match, command: "echo 'WARN: disk 91%'; exit 2", continue_on: {output: ["re:^WARN"]}}
  - {name: after-3, command: echo ok, depends: output-match}
  - {name: other-code, command: exit 8, continue_on: {exit_code: [7]}}
  - {name: after-4, command: echo ok, depends: other-code}
`);
    for (const name of ['after-1', 'after-2', 'after-3']) assert.equal(nodeOf(result, name).status, NodeStatus.Success, name);
    assert.equal(nodeOf(result, 'after-4').status, NodeStatus.Cancelled);
    assert.equal(result.status, RunStatus.Failed);
  });

  test('covered failures and successes give Partial Success (6)', async () => {
    const result = await runYaml('steps:\n  - {name: a, command: exit 1, continue_on: {failure: true}}\n  - {name: b, command: echo b}\n');
    assert.equal(result.status, RunStatus.PartialSuccess);
    assert.equal(result.outputs.metadata.status, 'partially_succeeded');
  });

  test('mark_success turns a covered failure into success', async () => {
    const result = await runYaml('steps:\n  - {name: a, command: exit 1, continue_on: {failure: true, mark_success: true}}\n  - {name: b, command: echo b}\n');
    assert.equal(nodeOf(result, 'a').status, NodeStatus.Success);
    assert.equal(result.status, RunStatus.Success);
  });
});
