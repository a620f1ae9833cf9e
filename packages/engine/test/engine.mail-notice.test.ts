import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RunStatus } from '@trellis/core';
import { cleanupRuns, readLog, runYaml, startYaml } from './support/run-yaml.js';

after(cleanupRuns);

const UNAVAILABLE = 'mail delivery is not available in this build';

/** The run log's messages, without their timestamps. */
function runLogLines(logDir: string): string[] {
  return readLog(`${logDir}/run.log`).trim().split('\n').map((line) => line.slice(line.indexOf(' ') + 1));
}

const notices = (lines: string[]): string[] => lines.filter((l) => l.startsWith('no mail'));

describe('mail settings in a build without mail delivery', () => {
  test('a failed run with mail_on.failure logs, after it finished, that no mail was sent', async () => {
    const result = await runYaml('mail_on: {failure: true, success: true}\nerror_mail: {to: ops@example.com}\nsteps:\n  - exit 4\n');
    assert.equal(result.status, RunStatus.Failed);
    const lines = runLogLines(result.logDir);
    assert.deepEqual(notices(lines), [`no mail was sent for the failed run (mail_on.failure): ${UNAVAILABLE}`]);
    assert.ok(lines.indexOf(notices(lines)[0] ?? '') > lines.findIndex((l) => l.startsWith('run finished: failed')));
  });

  test('a successful run with mail_on.success logs it; without a matching setting nothing is said', async () => {
    const ok = await runYaml('mail_on: {success: true}\nsteps:\n  - echo ok\n');
    assert.deepEqual(notices(runLogLines(ok.logDir)), [`no mail was sent for the successful run (mail_on.success): ${UNAVAILABLE}`]);
    const failureOnly = await runYaml('mail_on: {failure: true}\nsmtp: {host: mail.local}\nsteps:\n  - echo ok\n');
    assert.deepEqual(notices(runLogLines(failureOnly.logDir)), []);
  });

  test('a failed step with mail_on_error, and a failed handler with it, each name themselves', async () => {
    const result = await runYaml(`
steps:
  - {name: soft, command: exit 2, mail_on_error: true, continue_on: {failure: true}}
  - {name: quiet, command: echo fine, mail_on_error: true}
handler_on:
  exit: {command: exit 1, mail_on_error: true}
`);
    assert.deepEqual(notices(runLogLines(result.logDir)), [
      `no mail was sent for the failure of step "soft" (mail_on_error of step "soft"): ${UNAVAILABLE}`,
      `no mail was sent for the failure of step "onExit" (mail_on_error of step "onExit"): ${UNAVAILABLE}`,
    ]);
  });

  test('a run that waits for approval with mail_on.wait logs it when it starts waiting', async () => {
    const run = startYaml('mail_on: {wait: true}\nsteps:\n  - {name: gate, command: echo ready, approval: {prompt: Go?}}\n');
    await run.reporter.waitFor((s) => s.status === RunStatus.Waiting);
    assert.deepEqual(notices(runLogLines(run.logDir)), [`no mail was sent for the wait for approval (mail_on.wait): ${UNAVAILABLE}`]);
    run.handle.approve('gate');
    assert.equal((await run.result).status, RunStatus.Success);
  });
});
