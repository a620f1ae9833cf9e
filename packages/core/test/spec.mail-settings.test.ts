import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadDag } from '@trellis/core';

const SMTP = 'smtp: {host: mail.example.com, port: 587}\n';
const ERROR_MAIL = 'error_mail: {from: trellis@example.com, to: ops@example.com}\n';

describe('mail settings are checked when the DAG is loaded', () => {
  test('every setting that sends mail, with its mail config and smtp, is valid and warns of nothing', () => {
    const result = loadDag(`${SMTP}${ERROR_MAIL}
mail_on: {success: true, failure: true, wait: true}
info_mail: {from: trellis@example.com, to: [team@example.com, lead@example.com], prefix: "[OK]", attach_logs: true}
wait_mail: {from: trellis@example.com, to: approver@example.com}
defaults: {mail_on_error: true}
steps:
  - echo a
  - {name: send, type: mail, config: {to: [a@example.com], from: b@example.com, subject: s, message: m, contentType: text/html, attachments: [out.csv]}}
handler_on:
  failure: {command: echo f, mail_on_error: true}
`);
    assert.deepEqual([result.errors, result.warnings], [[], []]);
    assert.deepEqual(result.dag?.infoMail, { from: 'trellis@example.com', to: ['team@example.com', 'lead@example.com'], prefix: '[OK]', attachLogs: true });
  });

  test('without smtp, each setting that would send is named', () => {
    const result = loadDag(`${ERROR_MAIL}mail_on: {failure: true}\ndefaults: {mail_on_error: true}\nsteps:\n  - echo a\n  - {name: m, type: mail, config: {to: a@example.com, from: b@example.com}}\n`);
    const smtp = 'needs the DAG-level smtp server (smtp: {host: ...}) to send its mail';
    assert.deepEqual(result.errors, [
      'steps[1].type: a mail step sends through the DAG-level smtp server: add smtp: {host: ...}',
      `mail_on.failure: ${smtp}`,
      `defaults.mail_on_error: ${smtp}`,
    ]);
  });

  test('mail_on without its mail config, in a local DAG too, names the path', () => {
    const result = loadDag(`steps:\n  - echo main\n---\nname: notify\n${SMTP}mail_on: {success: true}\nsteps:\n  - {name: x, command: echo x, mail_on_error: true}\n`);
    assert.deepEqual(result.localDags.map((l) => l.errors), [[
      'mail_on.success: needs info_mail (from, to) to send its mail',
      'steps[0].mail_on_error: needs error_mail (from, to) to send its mail',
    ]]);
    assert.deepEqual(loadDag('mail_on: {failure: false}\nsteps:\n  - echo a\n').errors, []);
  });
});
