import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { userInfo } from 'node:os';
import { NodeStatus, RunStatus } from '@trellis/core';
import { MASK } from '@trellis/engine';
import { cleanupRuns, nodeOf, readLog, runYaml, startYaml, tempDir } from './support/run-yaml.js';
import { processesMatching, uniqueSleep } from './support/processes.js';
import { createPasswordUser, startSshd, type PasswordUser, type Sshd } from './support/sshd.js';

const me = userInfo().username;
let sshd: Sshd;
let passwordUser: PasswordUser;

before(async () => {
  passwordUser = createPasswordUser();
  sshd = await startSshd([me, passwordUser.name]);
});

after(async () => {
  await sshd.stop();
  passwordUser.remove();
  cleanupRuns();
});

const hostEnv = (): Record<string, string> => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tempDir('trellis-home-') });

/** DAG-level ssh to the test's sshd with key authentication, host key checked. */
function sshRoot(extra = ''): string {
  return `ssh:\n  host: 127.0.0.1\n  port: ${sshd.port}\n  user: ${me}\n  key: ${sshd.userKeyFile}\n  known_host_file: ${sshd.knownHostsFile}\n${extra}`;
}

describe('ssh: steps run on the host named by ssh', () => {
  test('DAG-level ssh with key auth: shell steps run over SSH, output captured like a shell step, step env sent', async () => {
    const result = await runYaml(`${sshRoot()}
steps:
  - name: where
    command: echo "via ssh from $(echo $SSH_CONNECTION | cut -d' ' -f1)"; echo "to stderr" >&2
    output: WHERE
  - name: env
    env:
      - GREETING: hello there
    command: echo "$GREETING and \${WHERE}"
    output: ENV
  - name: fails
    command:
      - "true"
      - exit 3
      - echo never
`, { hostEnv: hostEnv() });
    assert.equal(nodeOf(result, 'where').status, NodeStatus.Success);
    assert.equal(result.outputs.outputs.where, 'via ssh from 127.0.0.1');
    assert.match(readLog(nodeOf(result, 'where').stderr), /to stderr/);
    assert.equal(result.outputs.outputs.env, 'hello there and via ssh from 127.0.0.1');
    const fails = nodeOf(result, 'fails');
    assert.deepEqual([fails.status, fails.error], [NodeStatus.Failed, 'exit status 3']);
    assert.doesNotMatch(readLog(fails.stdout), /never/);
  });

  test('type: ssh with password auth as another user; the password is a secret, masked in the log', async () => {
    const host = { ...hostEnv(), SSH_PASSWORD_SOURCE: passwordUser.password };
    const result = await runYaml(`
secrets:
  - {name: SSH_PASSWORD, provider: env, key: SSH_PASSWORD_SOURCE}
steps:
  - name: who
    type: ssh
    config:
      host: 127.0.0.1
      port: ${sshd.port}
      user: ${passwordUser.name}
      password: \${SSH_PASSWORD}
      known_host_file: ${sshd.knownHostsFile}
      shell: sh
    command: echo "$(id -un) knows \${SSH_PASSWORD}"
    output: WHO
`, { hostEnv: host });
    const who = nodeOf(result, 'who');
    assert.equal(who.status, NodeStatus.Success, `${who.error} ${result.snapshot.error}`);
    assert.equal(result.outputs.outputs.who, `${passwordUser.name} knows ${MASK}`);
    assert.doesNotMatch(readLog(who.stdout) + readLog(who.stderr), new RegExp(passwordUser.password));
  });

  test('a wrong password fails the step with the server\'s refusal', async () => {
    const result = await runYaml(`
steps:
  - name: denied
    type: ssh
    config: {host: 127.0.0.1, port: ${sshd.port}, user: ${passwordUser.name}, password: not-it, known_host_file: ${sshd.knownHostsFile}}
    command: id
`, { hostEnv: hostEnv() });
    const denied = nodeOf(result, 'denied');
    assert.equal(denied.status, NodeStatus.Failed);
    assert.match(denied.error, /cannot connect to .*: All configured authentication methods failed/);
  });

  test('an unknown host key is refused before anything runs; strict_host_key: false accepts it', async () => {
    const marker = join(tempDir(), 'ran');
    const refused = await runYaml(`ssh:\n  host: 127.0.0.1\n  port: ${sshd.port}\n  user: ${me}\n  key: ${sshd.userKeyFile}\n  known_host_file: ${sshd.wrongKnownHostsFile}\nsteps:\n  - touch ${marker}\n`, { hostEnv: hostEnv() });
    const node = refused.snapshot.nodes[0];
    assert.equal(node?.status, NodeStatus.Failed);
    assert.match(node.error, new RegExp(`^host key SHA256:\\S+ of \\[127\\.0\\.0\\.1\\]:${sshd.port} is not in ${sshd.wrongKnownHostsFile}; add it`));
    assert.equal(existsSync(marker), false, 'nothing ran on the host');
    const home = hostEnv();
    const noKnownHosts = await runYaml(`ssh:\n  host: 127.0.0.1\n  port: ${sshd.port}\n  user: ${me}\n  key: ${sshd.userKeyFile}\nsteps:\n  - touch ${marker}\n`, { hostEnv: home });
    assert.match(noKnownHosts.snapshot.nodes[0]?.error ?? '', new RegExp(`known_host_file ${home.HOME}/.ssh/known_hosts cannot be read`));
    const lax = await runYaml(`ssh:\n  host: 127.0.0.1\n  port: ${sshd.port}\n  user: ${me}\n  key: ${sshd.userKeyFile}\n  strict_host_key: false\nsteps:\n  - touch ${marker}\n`, { hostEnv: home });
    assert.equal(lax.status, RunStatus.Success);
    assert.equal(existsSync(marker), true);
  });

  test('stop mid-command ends the remote process group; a step timeout does the same', async () => {
    const seconds = uniqueSleep();
    const marker = join(tempDir(), 'after-sleep');
    const run = startYaml(`${sshRoot()}steps:\n  - sleep ${seconds}; touch ${marker}\n`, { hostEnv: hostEnv() });
    for (let i = 0; i < 200 && processesMatching(`sleep ${seconds}`).length === 0; i += 1) await new Promise((r) => setTimeout(r, 25));
    assert.notDeepEqual(processesMatching(`sleep ${seconds}`), [], 'the remote sleep started');
    run.handle.stop();
    const result = await run.result;
    assert.equal(result.status, RunStatus.Aborted);
    assert.equal(result.snapshot.nodes[0]?.status, NodeStatus.Cancelled);
    for (let i = 0; i < 40 && processesMatching(`sleep ${seconds}`).length > 0; i += 1) await new Promise((r) => setTimeout(r, 25));
    assert.deepEqual(processesMatching(`sleep ${seconds}`), [], 'no remote process survives the stop');
    assert.equal(existsSync(marker), false);

    const slow = uniqueSleep();
    const timedOut = await runYaml(`${sshRoot()}steps:\n  - name: slow\n    timeout_sec: 1\n    command: sleep ${slow}\n`, { hostEnv: hostEnv() });
    assert.deepEqual([nodeOf(timedOut, 'slow').status, nodeOf(timedOut, 'slow').error], [NodeStatus.Failed, 'step timed out after 1s']);
    for (let i = 0; i < 40 && processesMatching(`sleep ${slow}`).length > 0; i += 1) await new Promise((r) => setTimeout(r, 25));
    assert.deepEqual(processesMatching(`sleep ${slow}`), []);
  });
});
