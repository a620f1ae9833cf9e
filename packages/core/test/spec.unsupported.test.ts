import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadDag, parseBaseConfig, selectDag } from '@trellis/core';

const noMail = (path: string): string => `${path}: no mail will be sent: mail delivery is not available in this build`;

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
  - {name: put, type: s3, command: upload, config: {bucket: b}}
handler_on:
  failure: {type: mail, config: {to: ops@example.com}}
`);
    assert.equal(result.dag, undefined);
    const refused = (path: string, type: string): string => `${path}.type: step type "${type}" is not available in this build; the DAG cannot run until it is`;
    assert.deepEqual(result.errors, [refused('handler_on.failure', 'mail'), refused('steps[0]', 'chat'), refused('steps[1]', 'gha'), refused('steps[2]', 's3')]);
  });
});

describe('mail settings are valid but warned about', () => {
  test('every mail setting is named; the DAG stays valid', () => {
    const result = loadDag(`
mail_on: {success: false, failure: true, wait: true}
error_mail: {to: ops@example.com}
info_mail: {to: team@example.com}
wait_mail: {to: approver@example.com}
smtp: {host: mail.local, port: 25}
steps:
  - name: a
    command: echo a
    mail_on_error: true
  - name: b
    command: echo b
handler_on:
  failure: {command: echo f, mail_on_error: true}
`);
    assert.deepEqual(result.errors, []);
    assert.ok(result.dag);
    assert.deepEqual(result.warnings, [
      noMail('mail_on.failure'),
      noMail('mail_on.wait'),
      noMail('error_mail'),
      noMail('info_mail'),
      noMail('wait_mail'),
      noMail('smtp'),
      noMail('handler_on.failure.mail_on_error'),
      noMail('steps[0].mail_on_error'),
    ]);
  });

  test('mail_on_error from defaults is named once, at defaults', () => {
    const result = loadDag('defaults: {mail_on_error: true}\nsteps:\n  - echo a\n  - echo b\n');
    assert.deepEqual(result.warnings, [noMail('defaults.mail_on_error')]);
    assert.equal(result.dag?.steps.every((s) => s.mailOnError), true);
  });

  test('a local DAG\'s warnings carry its name; a DAG without mail settings has none', () => {
    const result = loadDag('steps:\n  - echo main\n---\nname: notify\nmail_on: {failure: true}\nsteps:\n  - echo x\n');
    assert.deepEqual(result.warnings, [`local DAG notify: ${noMail('mail_on.failure')}`]);
    assert.deepEqual(loadDag('mail_on: {failure: false}\nsteps:\n  - echo a\n').warnings, []);
  });

  test('an invalid DAG still reports its warnings', () => {
    const result = loadDag('smtp: {host: m}\nssh: {user: u}\nsteps:\n  - echo a\n');
    assert.deepEqual([result.errors, result.warnings], [['ssh.host: is required'], [noMail('smtp')]]);
  });
});
