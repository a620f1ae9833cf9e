import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RunStatus } from '@trellis/core';
import { insertRun, putStoredFile } from '@trellis/store';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';
import { startWorkerProcess, type WorkerProcess } from './support/worker-process.js';

let t: TestCoordinator;
let worker: WorkerProcess | undefined;
type Json = Record<string, unknown>;

const SSH_REFUSED = 'ssh.host: is required';
const CONTAINER_REFUSED = 'container.pull_policy: unknown field';

/** A step that leaves a file behind: if it exists, the step ran on this host. */
const marker = (name: string): string => join(t.dir, `${name}.ran`);
/** A DAG-level ssh without a host: the steps cannot be placed where asked, so the DAG is invalid. */
const sshSpec = (name: string): string => `ssh:\n  user: deploy\nsteps:\n  - touch ${marker(name)}\n`;

before(async () => {
  t = await startTestCoordinator('api_unsupported', { plain: 'steps:\n  - echo plain\n' });
  // Stored without validation, the way an older build, a hand edit or a git sync would leave it.
  await putStoredFile(t.coordinator.db, 'dag', 'remote', sshSpec('remote'), { by: 'test', origin: 'test' });
  await t.coordinator.index.refresh('remote');
});
after(async () => {
  await worker?.stop();
  await t.stop();
});

/** Records a queued run the way an older build did, without validating its definition now. */
async function recordRun(dagName: string, yaml: string, placement: { dispatchTarget: 'local' | 'remote'; workerSelector: Record<string, string> }): Promise<void> {
  await insertRun(t.coordinator.db, {
    dagName, dagRunId: 'old-1', fileName: dagName, attemptId: `attempt-${dagName}`, status: RunStatus.Queued, params: '[]', queueName: dagName,
    logFile: join(t.dir, 'data', 'logs', dagName, 'old-1.1', 'run.log'), specYaml: yaml, labels: [], trigger: 'manual', triggeredBy: { kind: 'anonymous', id: 'anonymous', name: 'anonymous' }, noReuse: false, ...placement,
  });
}

describe('ssh and container settings that cannot be honoured are refused, and nothing runs on this host', () => {
  test('POST /dags/validate accepts well-formed ssh and container settings and reports the rest in errors[] with their paths', async () => {
    const ok = await t.call('POST', '/dags/validate', { spec: 'ssh: {host: build.internal, user: deploy}\nsteps:\n  - uname -a\n  - {name: b, container: alpine, command: echo b}\n' });
    assert.deepEqual([ok.status, ok.json.valid, ok.json.errors], [200, true, []]);
    const ssh = await t.call('POST', '/dags/validate', { spec: sshSpec('v') });
    assert.deepEqual([ssh.status, ssh.json.valid, ssh.json.errors], [200, false, [SSH_REFUSED]]);
    const image = await t.call('POST', '/dags/validate', { spec: 'container: {exec: my-box, pull_policy: always}\nsteps:\n  - echo hi\n' });
    assert.deepEqual([image.json.valid, image.json.errors], [false, [CONTAINER_REFUSED]]);
    const step = await t.call('POST', '/dags/validate', { spec: 'steps:\n  - echo a\n  - {name: b, container: {image: alpine, startup: forever}, command: echo b}\n' });
    assert.equal(step.json.valid, false);
    assert.deepEqual(step.json.errors, ['steps[1].container.startup: must be keepalive, entrypoint or command']);
  });

  test('creating or updating a DAG with them is refused like any invalid spec', async () => {
    const created = await t.call('POST', '/dags', { name: 'boxed', spec: 'container: {exec: my-box, pull_policy: always}\nsteps:\n  - echo hi\n' });
    assert.deepEqual([created.status, created.json.code], [400, 'bad_request']);
    assert.deepEqual((created.json.details as Json).errors, [CONTAINER_REFUSED]);
    assert.equal((await t.call('GET', '/dags/boxed')).status, 404);
    const put = await t.call('PUT', '/dags/plain/spec', { spec: sshSpec('plain') });
    assert.deepEqual([put.status, put.json.errors], [200, [SSH_REFUSED]]);
    assert.equal((await t.call('GET', '/dags/plain/spec')).json.spec, 'steps:\n  - echo plain\n');
  });

  test('an inline run is refused and nothing runs', async () => {
    const res = await t.call('POST', '/dag-runs', { spec: sshSpec('inline'), name: 'inline' });
    assert.deepEqual([res.status, res.json.code], [400, 'bad_request']);
    assert.deepEqual((res.json.details as Json).errors, [SSH_REFUSED]);
    const queued = await t.call('POST', '/dag-runs/enqueue', { spec: sshSpec('inline'), name: 'inline' });
    assert.equal(queued.status, 400);
    assert.equal(existsSync(marker('inline')), false);
  });

  test('a DAG with ssh already in the DAGs directory cannot be started or enqueued', async () => {
    const detail = await t.call('GET', '/dags/remote');
    assert.deepEqual(detail.json.errors, [SSH_REFUSED]);
    const started = await t.call('POST', '/dags/remote/start', {});
    assert.deepEqual([started.status, started.json.code], [400, 'bad_request']);
    assert.equal(started.json.message, `the DAG definition is invalid: ${SSH_REFUSED}`);
    assert.equal((await t.call('POST', '/dags/remote/enqueue', {})).status, 400);
    assert.equal((await t.call('POST', '/dags/remote/start-sync', { timeout: 5 })).status, 400);
    const runs = await t.call('GET', '/dags/remote/dag-runs');
    assert.deepEqual(runs.json.dagRuns, []);
    assert.equal(existsSync(marker('remote')), false);
  });

  test('a run recorded with ssh by an older build fails on the local executor before any step', async () => {
    await recordRun('recorded', sshSpec('recorded'), { dispatchTarget: 'local', workerSelector: {} });
    // Any start wakes the dispatcher; the recorded run is admitted with it.
    const plain = await t.call('POST', '/dags/plain/start', {});
    await t.waitForRunStatus('plain', plain.json.dagRunId as string, [RunStatus.Success]);
    const run = await t.waitForRunStatus('recorded', 'old-1', [RunStatus.Failed]);
    assert.equal(String(run.error), `the recorded definition is invalid: ${SSH_REFUSED}`);
    assert.equal(existsSync(marker('recorded')), false);
  });

  test('a run recorded with a container fails on a worker before any step', async () => {
    const address = t.coordinator.grpcAddress;
    assert.ok(address !== undefined);
    worker = startWorkerProcess(address, 'worker-far', 'pool=far', t.dir);
    // Only a worker labelled pool=far may take it: the local executor never runs a remote run.
    await recordRun('boxed-remote', `container: {exec: my-box, pull_policy: always}\nsteps:\n  - touch ${marker('boxed-remote')}\n`, { dispatchTarget: 'remote', workerSelector: { pool: 'far' } });
    const run = await t.waitForRunStatus('boxed-remote', 'old-1', [RunStatus.Failed], 30_000);
    assert.match(String(run.error), /the recorded definition is invalid: container\.pull_policy: unknown field/, worker.output());
    assert.equal(existsSync(marker('boxed-remote')), false);
  });
});

describe('typed step config', () => {
  test('POST /dags/validate names each problem by its path; a run of such a spec is refused', async () => {
    const spec = 'steps:\n  - {name: ask, type: chat, llm: {temperature: 3}}\n  - {name: put, type: s3, command: explode}\n  - {name: r, type: redis, command: GET k, config: {mode: galaxy}}\n';
    const res = await t.call('POST', '/dags/validate', { spec });
    assert.equal(res.json.valid, false);
    const refused = (path: string, type: string): string => `${path}.type: step type "${type}" is not available in this build; the DAG cannot run until it is`;
    assert.deepEqual(res.json.errors, [
      refused('steps[0]', 'chat'),
      'steps[0].llm.temperature: must be a number from 0.0 to 2.0',
      'steps[1].command: unknown s3 command "explode" (known: upload, download, list, delete)',
      'steps[2].config.mode: must be one of standalone, sentinel, cluster',
    ]);
    assert.equal((await t.call('POST', '/dag-runs', { spec, name: 'typed' })).status, 400);
  });
});

describe('mail settings', () => {
  test('POST /dags/validate names a mail setting that could not send by its path', async () => {
    const res = await t.call('POST', '/dags/validate', { spec: 'mail_on: {failure: true}\nsteps:\n  - echo hi\n' });
    assert.equal(res.json.valid, false);
    assert.deepEqual(res.json.errors, [
      'mail_on.failure: needs error_mail (from, to) to send its mail',
      'mail_on.failure: needs the DAG-level smtp server (smtp: {host: ...}) to send its mail',
    ]);
    const complete = await t.call('POST', '/dags/validate', { spec: 'mail_on: {failure: true}\nsmtp: {host: mail.local}\nerror_mail: {from: a@example.com, to: ops@example.com}\nsteps:\n  - echo hi\n' });
    assert.deepEqual([complete.json.valid, complete.json.warnings], [true, []]);
  });

  test('a mail that cannot be sent is logged on the run, whose status stays what its steps made it', async () => {
    const spec = 'mail_on: {failure: true}\nsmtp: {host: 127.0.0.1, port: 1, timeout: 2}\nerror_mail: {from: a@example.com, to: ops@example.com}\nsteps:\n  - exit 3\n';
    const res = await t.call('POST', '/dag-runs', { spec, name: 'mailer' });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    const id = res.json.dagRunId as string;
    const run = await t.waitForRunStatus('mailer', id, [RunStatus.Failed]);
    const log = readFileSync(String(run.log), 'utf8');
    assert.match(log, /mail for the failed run \(mail_on\.failure\) could not be sent: .*ECONNREFUSED/);
  });
});
