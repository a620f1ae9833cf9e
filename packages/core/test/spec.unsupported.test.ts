import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadDag, parseBaseConfig, selectDag } from '@trellis/core';


describe('ssh and container placements are accepted and checked', () => {
  test('DAG-level ssh and container (exec form and image form) make a valid DAG', () => {
    assert.deepEqual(loadDag('ssh:\n  host: build.internal\n  user: deploy\nsteps:\n  - uname -a\n').errors, []);
    assert.deepEqual(loadDag('container: my-running-container\nsteps:\n  - echo hi\n').errors, []);
    assert.deepEqual(loadDag('container:\n  image: alpine:3.19\n  pull_policy: missing\nsteps:\n  - echo hi\n').errors, []);
  });

  test('errors name the path of the step or handler at fault', () => {
    const result = loadDag(`
steps:
  - echo first
  - name: in-box
    container: {image: python:3.12, wait_for: soon}
    command: python -V
handler_on:
  exit:
    container: {exec: sidecar, image_pull: true}
    command: echo bye
`);
    assert.equal(result.dag, undefined);
    assert.deepEqual(result.errors, ['handler_on.exit.container.image_pull: unknown field', 'steps[1].container.wait_for: must be running or healthy']);
  });

  test('a DAG-level ssh without a host is invalid, also in a local DAG and a base configuration', () => {
    const result = loadDag('steps:\n  - echo main\n---\nname: remote\nssh: {user: u}\nsteps:\n  - echo there\n', { fileName: 'main' });
    assert.deepEqual(result.localDags.map((l) => [l.name, l.dag, l.errors]), [['remote', undefined, ['ssh.host: is required']]]);
    const picked = selectDag('ssh: {user: u}\nsteps:\n  - echo there\n', 'remote', 'remote');
    assert.equal(picked.error, 'the recorded definition is invalid: ssh.host: is required');
    assert.deepEqual(parseBaseConfig('ssh: {host: h, port: 0}\n').errors, ['ssh.port: must be a port number from 1 to 65535']);
  });

  test('a script cannot be sent over a DAG-level ssh or into a DAG-level container', () => {
    assert.deepEqual(loadDag('ssh: {host: h}\nsteps:\n  - script: echo hi\n').errors, ['steps[0].script: cannot run over SSH; put the commands in command']);
    assert.deepEqual(loadDag('container: box\nsteps:\n  - script: echo hi\n').errors, ['steps[0].script: cannot run in a container; put the commands in command']);
  });
});

describe('step types without an executor in this build fail validation', () => {
  test('each such type is named at its step or handler path; the aliases too', () => {
    const result = loadDag(`
steps:
  - {name: ask, type: chat, messages: [{role: user, content: hi}]}
  - {name: act, type: github_action, command: actions/checkout@v4}
handler_on:
  failure: {type: agent, command: summarise}
`);
    assert.equal(result.dag, undefined);
    const refused = (path: string, type: string): string => `${path}.type: step type "${type}" is not available in this build; the DAG cannot run until it is`;
    assert.deepEqual(result.errors, [refused('handler_on.failure', 'agent'), refused('steps[0]', 'chat'), refused('steps[1]', 'gha')]);
  });
});
