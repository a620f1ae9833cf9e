import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { simpleParser, type AddressObject, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { NodeStatus, RunStatus } from '@trellis/core';
import { cleanupRuns, nodeOf, readLog, runYaml, startYaml, tempDir } from './support/run-yaml.js';

const PASSWORD = 'smtp-secret-4711';
let server: SMTPServer;
let port = 0;
let received: ParsedMail[] = [];
let arrivals: Array<() => void> = [];

/** Resolves when `count` messages have arrived in all. */
function mails(count: number): Promise<ParsedMail[]> {
  return new Promise((resolve) => {
    const check = (): void => {
      if (received.length >= count) resolve(received);
      else arrivals.push(check);
    };
    check();
  });
}

const addresses = (field: AddressObject | AddressObject[] | undefined): string[] => (Array.isArray(field) ? field : field === undefined ? [] : [field]).flatMap((a) => a.value.map((v) => v.address ?? ''));
const smtp = (): string => `smtp: {host: 127.0.0.1, port: ${port}, username: trellis, password: "\${SMTP_PASSWORD}"}`;
const secrets = 'secrets: [{name: SMTP_PASSWORD, provider: env, key: TEST_SMTP_PASSWORD}]';

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const free = (probe.address() as AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
  return free;
}

before(async () => {
  process.env.TEST_SMTP_PASSWORD = PASSWORD;
  server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    logger: false,
    onAuth: (auth, _session, callback) => (auth.username === 'trellis' && auth.password === PASSWORD ? callback(null, { user: 'trellis' }) : callback(new Error('bad credentials'))),
    onData: (stream, _session, callback) => {
      simpleParser(stream).then((mail) => {
        received.push(mail);
        for (const wake of arrivals.splice(0)) wake();
        callback();
      }, callback);
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.server.address() as AddressInfo).port;
});

beforeEach(() => {
  received = [];
  arrivals = [];
});

after(async () => {
  cleanupRuns();
  await new Promise<void>((resolve) => server.close(resolve));
});

const runLogMessages = (logDir: string): string[] => readLog(join(logDir, 'run.log')).trim().split('\n').map((line) => line.slice(line.indexOf(' ') + 1));

describe('mail step', () => {
  test('sends to every recipient with subject, body and attachment; the message id is its output', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'report.csv'), 'a,b\n1,2\n');
    const result = await runYaml(`
${smtp()}
${secrets}
working_dir: ${dir}
params: [WHO=team]
steps:
  - name: notify
    type: mail
    output: MESSAGE_ID
    config:
      to: [ops@example.com, dev@example.com]
      from: trellis@example.com
      subject: Report for \${WHO}
      message: The report is attached.
      attachments: report.csv
`);
    assert.equal(result.status, RunStatus.Success, result.snapshot.nodes[0]?.error);
    const [mail] = await mails(1);
    assert.ok(mail);
    assert.deepEqual(addresses(mail.to).sort(), ['dev@example.com', 'ops@example.com']);
    assert.equal(mail.subject, 'Report for team');
    assert.equal(mail.text?.trim(), 'The report is attached.');
    assert.deepEqual(mail.attachments.map((a) => [a.filename, a.content.toString('utf8')]), [['report.csv', 'a,b\n1,2\n']]);
    assert.equal(result.outputs.outputs.messageId, mail.messageId);
    assert.doesNotMatch(readLog(nodeOf(result, 'notify').stderr), new RegExp(PASSWORD));
  });

  test('html content; an unreachable server or a missing attachment fails the step with the reason', async () => {
    const html = await runYaml(`${smtp()}\n${secrets}\nsteps:\n  - {name: h, type: mail, config: {to: a@example.com, from: b@example.com, subject: H, message: "<p>hi</p>", contentType: text/html}}\n`);
    assert.equal(html.status, RunStatus.Success);
    assert.equal((await mails(1))[0]?.html, '<p>hi</p>\n');
    const down = await runYaml(`smtp: {host: 127.0.0.1, port: ${await closedPort()}, timeout: 2}\nsteps:\n  - {name: m, type: mail, config: {to: a@example.com, from: b@example.com}}\n`);
    assert.equal(down.status, RunStatus.Failed);
    assert.match(nodeOf(down, 'm').error, /^not sent: .*ECONNREFUSED/);
    const missing = await runYaml(`${smtp()}\nsteps:\n  - {name: m, type: mail, config: {to: a@example.com, from: b@example.com, attachments: [nowhere.txt]}}\n`);
    assert.equal(nodeOf(missing, 'm').error, 'attachment "nowhere.txt" not found');
  });
});

describe('a mail step to a server that never answers', () => {
  test('ends at its timeout_sec, and at once on stop', async () => {
    const accepted = new Set<Socket>();
    const silent = createServer((socket) => accepted.add(socket.on('error', () => undefined)));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const silentPort = (silent.address() as AddressInfo).port;
    try {
      const yaml = (extra: string): string => `smtp: {host: 127.0.0.1, port: ${silentPort}}\nsteps:\n  - {name: m, type: mail, ${extra}config: {to: a@example.com, from: b@example.com}}\n`;
      const started = Date.now();
      const timed = await runYaml(yaml('timeout_sec: 1, '));
      assert.equal(nodeOf(timed, 'm').status, NodeStatus.Failed);
      assert.ok(Date.now() - started < 5000);
      const run = startYaml(yaml(''));
      await run.reporter.waitFor((snap) => snap.nodes[0]?.status === NodeStatus.Running);
      await new Promise((resolve) => setTimeout(resolve, 200));
      const stoppedAt = Date.now();
      run.handle.stop();
      assert.equal((await run.result).status, RunStatus.Aborted);
      assert.ok(Date.now() - stoppedAt < 2000);
    } finally {
      for (const socket of accepted) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});

describe('notifications', () => {
  test('a failed run mails error_mail with its prefix, a summary and the attached logs', async () => {
    const result = await runYaml(`
${smtp()}
${secrets}
mail_on: {failure: true, success: true}
error_mail: {from: trellis@example.com, to: [ops@example.com, oncall@example.com], prefix: "[ERR]", attach_logs: true}
info_mail: {from: trellis@example.com, to: team@example.com}
steps:
  - name: load
    command: echo loading rows; exit 4
`);
    assert.equal(result.status, RunStatus.Failed);
    const [mail] = await mails(1);
    assert.ok(mail);
    assert.deepEqual(addresses(mail.to), ['ops@example.com', 'oncall@example.com']);
    assert.equal(mail.subject, '[ERR] test: failed');
    assert.match(mail.text ?? '', /Run: run-1\nStatus: failed\n/);
    assert.match(mail.text ?? '', /load: failed \(exit status 4\)/);
    const attached = new Map(mail.attachments.map((a) => [a.filename, a.content.toString('utf8')]));
    assert.match(attached.get('run.log') ?? '', /step "load" finished: failed/);
    assert.equal(attached.get('load.out'), 'loading rows\n');
    const lines = runLogMessages(result.logDir);
    assert.ok(lines.indexOf('mail sent for the failed run (mail_on.failure) to ops@example.com, oncall@example.com') > lines.findIndex((l) => l.startsWith('run finished: failed')));
    assert.equal(received.length, 1, 'no success mail for a failed run');
  });

  test('a successful run mails info_mail; a failed step with mail_on_error mails error_mail about that step', async () => {
    const result = await runYaml(`
${smtp()}
${secrets}
mail_on: {success: true}
info_mail: {from: trellis@example.com, to: team@example.com, prefix: "[OK]"}
error_mail: {from: trellis@example.com, to: ops@example.com, attach_logs: true}
steps:
  - {name: soft, command: echo soft failure >&2; exit 2, mail_on_error: true, continue_on: {failure: true}}
  - {name: fine, command: echo fine, mail_on_error: true}
`);
    assert.equal(result.status, RunStatus.PartialSuccess);
    const sent = await mails(2);
    assert.deepEqual(sent.map((m) => [m.subject, addresses(m.to)]), [
      ['test: step "soft" failed', ['ops@example.com']],
      ['[OK] test: partially_succeeded', ['team@example.com']],
    ]);
    assert.deepEqual(sent[0]?.attachments.map((a) => [a.filename, a.content.toString('utf8')]), [['soft.err', 'soft failure\n']]);
  });

  test('a run waiting for approval mails wait_mail', async () => {
    const run = startYaml(`${smtp()}\n${secrets}\nmail_on: {wait: true}\nwait_mail: {from: trellis@example.com, to: approver@example.com}\nsteps:\n  - {name: gate, command: echo ready, approval: {prompt: Go?}}\n`);
    const [mail] = await mails(1);
    assert.equal(mail?.subject, 'test: waiting for approval');
    assert.match(mail?.text ?? '', /Waiting for approval: gate/);
    await run.reporter.waitFor((s) => s.status === RunStatus.Waiting);
    run.handle.approve('gate');
    assert.equal((await run.result).status, RunStatus.Success);
  });

  test('a mail that cannot be sent is logged on the run and changes nothing else', async () => {
    const dead = `smtp: {host: 127.0.0.1, port: ${await closedPort()}, timeout: 2}`;
    const ok = await runYaml(`${dead}\nmail_on: {success: true}\ninfo_mail: {from: a@example.com, to: b@example.com}\nsteps:\n  - echo ok\n`);
    assert.equal(ok.status, RunStatus.Success);
    assert.ok(runLogMessages(ok.logDir).some((l) => /^mail for the successful run \(mail_on\.success\) could not be sent: .*ECONNREFUSED/.test(l)));
    const wrongPassword = await runYaml(`smtp: {host: 127.0.0.1, port: ${port}, username: trellis, password: wrong-${PASSWORD}}\nmail_on: {failure: true}\nerror_mail: {from: a@example.com, to: b@example.com}\nsteps:\n  - {name: s, command: exit 1, mail_on_error: true}\n`);
    assert.equal(wrongPassword.status, RunStatus.Failed);
    assert.equal(nodeOf(wrongPassword, 's').status, NodeStatus.Failed);
    const notSent = runLogMessages(wrongPassword.logDir).filter((l) => l.startsWith('mail for'));
    assert.equal(notSent.length, 2, notSent.join('\n'));
    assert.ok(notSent.every((l) => /could not be sent: .*bad credentials/i.test(l)), notSent.join('\n'));
    assert.equal(received.length, 0);
  });
});
