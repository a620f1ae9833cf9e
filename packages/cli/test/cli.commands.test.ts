import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createSilentLogger, loadServerConfig, startCoordinator, type Coordinator } from '@trellis/coordinator';
import { spawnTrellis, trellis as trellisIn, waitFor } from './support/trellis.js';

const dir = mkdtempSync(join(tmpdir(), 'trellis-cli-'));
const gate = join(dir, 'gate');
let coordinator: Coordinator;
let server: string[];

const trellis = (...args: string[]) => trellisIn(dir, ...args);

before(async () => {
  mkdirSync(join(dir, 'dags'));
  writeFileSync(join(dir, 'dags', 'hello.yaml'), 'params: [WHO=world]\nsteps:\n  - name: greet\n    command: echo hello $WHO\n');
  writeFileSync(join(dir, 'dags', 'broken.yaml'), "steps:\n  - name: ok\n    command: echo fine\n  - name: boom\n    command: sh -c 'echo going down >&2; exit 3'\n");
  // Writes a line, then waits for the test to create the gate file before it writes the next.
  writeFileSync(join(dir, 'dags', 'gated.yaml'), `steps:\n  - name: wait\n    command: sh -c 'echo before; while [ ! -f ${gate} ]; do sleep 0.1; done; echo after'\n`);
  writeFileSync(join(dir, 'adhoc.yaml'), 'name: spec-named\nsteps:\n  - name: a\n    command: echo inline\n');
  writeFileSync(join(dir, 'unnamed.yaml'), 'steps:\n  - name: a\n    command: echo unnamed\n');
  writeFileSync(join(dir, 'bad.yaml'), 'steps:\n  - name: a\n    retry_policy: {limit: -1}\n');
  const config = loadServerConfig({ cwd: dir, env: {}, overrides: { port: 0, grpcPort: 0, dagsDir: join(dir, 'dags'), dataDir: join(dir, 'data') } });
  coordinator = await startCoordinator(config, createSilentLogger(), { watch: false });
  server = ['--server', coordinator.apiUrl];
});

after(async () => {
  await coordinator.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('trellis command', () => {
  test('help for every command, --version; unknown commands and flags are usage errors (exit 2)', async () => {
    for (const command of ['server', 'worker', 'start', 'enqueue', 'status', 'stop', 'retry', 'logs', 'list', 'history', 'validate', 'dry']) {
      const res = await trellis(command, '--help');
      assert.equal(res.code, 0, command);
      assert.match(res.out, new RegExp(`Usage: trellis ${command}`));
    }
    const top = await trellis('--help');
    assert.equal(top.code, 0);
    for (const command of ['logs', 'list', 'history', 'retry']) assert.match(top.out, new RegExp(`^  ${command} `, 'm'));
    const { version } = JSON.parse(readFileSync(resolve(import.meta.dirname, '../package.json'), 'utf8')) as { version: string };
    assert.deepEqual(await trellis('--version'), { code: 0, out: `${version}\n`, err: '' });
    assert.equal((await trellis('nope')).code, 2);
    const badFlag = await trellis('validate', '--bogus', 'x.yaml');
    assert.equal(badFlag.code, 2);
    assert.match(badFlag.err, /bogus/);
  });

  test('a negative option value is a value: --grpc-port -1 parses, -2 is refused by name', async () => {
    // --port 70000 fails in the configuration, after parsing: it shows --grpc-port -1 got through.
    const parsed = await trellis('server', '--grpc-port', '-1', '--port', '70000');
    assert.equal(parsed.code, 2);
    assert.match(parsed.err, /invalid configuration:\n {2}- port: /);
    assert.doesNotMatch(parsed.err, /grpc/);
    const refused = await trellis('server', '--grpc-port', '-2');
    assert.equal(refused.code, 2);
    assert.match(refused.err, /--grpc-port <port>' argument '-2' is invalid/);
  });

  test('validate names every problem; exit 1 when invalid', async () => {
    const good = await trellis('validate', 'dags/hello.yaml');
    assert.equal(good.code, 0);
    const bad = await trellis('validate', 'bad.yaml', 'missing.yaml');
    assert.equal(bad.code, 1);
    assert.match(bad.out, /steps\[0\]\.retry_policy\.limit: must be a non-negative integer/);
    assert.match(bad.out, /cannot read missing\.yaml: ENOENT/);
  });

  test('validate checks ssh and container settings by their fields; and mail settings', async () => {
    writeFileSync(join(dir, 'remote.yaml'), 'ssh: {user: deploy}\nsteps:\n  - uname -a\n');
    writeFileSync(join(dir, 'boxed.yaml'), 'steps:\n  - {name: a, container: {image: alpine, wait_for: soon}, command: echo a}\n');
    writeFileSync(join(dir, 'placed.yaml'), 'ssh: {host: build.internal}\nsteps:\n  - uname -a\n  - {name: a, container: {image: alpine}, command: echo a}\n');
    assert.equal((await trellis('validate', 'placed.yaml')).code, 0);
    writeFileSync(join(dir, 'mailer.yaml'), 'mail_on: {failure: true}\nsteps:\n  - echo a\n');
    const refused = await trellis('validate', 'remote.yaml', 'boxed.yaml');
    assert.equal(refused.code, 1);
    assert.match(refused.out, /remote\.yaml: 1 problem\(s\)\n {2}- ssh\.host: is required/);
    assert.match(refused.out, /boxed\.yaml: 1 problem\(s\)\n {2}- steps\[0\]\.container\.wait_for: must be running or healthy/);
    const mailer = await trellis('validate', 'mailer.yaml');
    assert.equal(mailer.code, 1);
    assert.match(mailer.out, /mailer\.yaml: 2 problem\(s\)\n {2}- mail_on\.failure: needs error_mail \(from, to\) to send its mail\n/);
    writeFileSync(join(dir, 'mailer.yaml'), 'mail_on: {failure: true}\nsmtp: {host: mail.local}\nerror_mail: {from: a@example.com, to: ops@example.com}\nsteps:\n  - echo a\n');
    assert.equal((await trellis('validate', 'mailer.yaml')).out, 'mailer.yaml: valid (1 steps)\n');
  });

  test('dry shows resolved params and the steps without running anything', async () => {
    const res = await trellis('dry', 'dags/hello.yaml', '--params', 'WHO=cli');
    assert.equal(res.code, 0);
    assert.match(res.out, /WHO=cli/);
    assert.match(res.out, /greet \[shell\]: echo hello \$WHO/);
  });

  test('start, status --follow, logs and stop against a running coordinator', async () => {
    const started = await trellis('start', 'hello', '--params', '{"WHO": "cli"}', ...server);
    assert.equal(started.code, 0, started.err);
    const id = started.out.trim();
    const status = await trellis('status', 'hello', id, '--follow', ...server);
    assert.equal(status.code, 0);
    assert.match(status.out, new RegExp(`hello ${id}: succeeded`));
    const runLog = await trellis('logs', 'hello', id, ...server);
    assert.equal(runLog.code, 0, runLog.err);
    assert.match(runLog.out, /step "greet" finished: succeeded/);
    assert.equal((await trellis('logs', 'hello', '--step', 'greet', ...server)).out, 'hello cli\n');
    const stop = await trellis('stop', 'hello', id, ...server);
    assert.equal(stop.code, 1);
    assert.match(stop.err, /not_running/);
    const missing = await trellis('start', 'nope', ...server);
    assert.equal(missing.code, 1);
    assert.match(missing.err, /not_found: DAG not found/);
  });

  test('start --wait streams the run and exits with its result; status --follow too', async () => {
    const good = await trellis('start', 'hello', '--wait', ...server);
    assert.equal(good.code, 0, good.err);
    const goodId = good.out.split('\n')[0] ?? '';
    assert.match(good.out, new RegExp(`hello ${goodId}: succeeded\n {2}greet: succeeded`));
    const bad = await trellis('start', 'broken', '--wait', ...server);
    assert.equal(bad.code, 1, bad.out + bad.err);
    const badId = bad.out.split('\n')[0] ?? '';
    assert.match(bad.out, new RegExp(`broken ${badId}: failed`));
    assert.match(bad.out, /boom: failed \(exit status 3\)/);
    const followed = await trellis('status', 'broken', badId, '--follow', ...server);
    assert.equal(followed.code, 1);
    assert.equal((await trellis('status', 'broken', badId, ...server)).code, 0, 'showing a failed run is no failure');
    assert.equal((await trellis('logs', 'broken', badId, '--step', 'boom', '--stderr', ...server)).out, 'going down\n');
  });

  test('logs --follow prints lines as they are written and ends with the run', async () => {
    rmSync(gate, { force: true });
    const started = await trellis('start', 'gated', ...server);
    assert.equal(started.code, 0, started.err);
    const id = started.out.trim();
    const follow = spawnTrellis(dir, ['logs', 'gated', id, '--step', 'wait', '--follow', ...server]);
    // A line is printed at once; its newline once a later line (or the run's end) shows it is whole.
    await waitFor('the first line', () => follow.out() === 'before');
    const status = await trellis('status', 'gated', id, ...server);
    assert.match(status.out, /gated \S+: running/, 'the run still waits at the gate');
    writeFileSync(gate, '');
    const done = await follow.finished;
    assert.equal(done.code, 0, done.err);
    assert.equal(done.out, 'before\nafter\n');
  });

  test('an inline run from a file keeps the name in its spec; without one it takes the file name', async () => {
    const named = await trellis('start', 'adhoc.yaml', ...server);
    assert.equal(named.code, 0, named.err);
    const id = named.out.trim();
    const status = await trellis('status', 'spec-named', id, '--follow', ...server);
    assert.equal(status.code, 0, status.err);
    assert.match(status.out, new RegExp(`spec-named ${id}: succeeded`));
    const unnamed = await trellis('start', 'unnamed.yaml', ...server);
    const unnamedStatus = await trellis('status', 'unnamed', unnamed.out.trim(), '--follow', ...server);
    assert.equal(unnamedStatus.code, 0, unnamedStatus.err);
  });

  test('list shows the DAGs; history the runs of one; retry runs a run again', async () => {
    const first = await trellis('start', 'broken', '--run-id', 'first-try', '--wait', ...server);
    assert.equal(first.code, 1);
    const list = await trellis('list', ...server);
    assert.equal(list.code, 0, list.err);
    assert.match(list.out, /^NAME +SCHEDULE +LATEST RUN +STATE$/m);
    assert.match(list.out, /^broken +- +failed first-try +active$/m);
    assert.match(list.out, /^hello +/m);
    const retry = await trellis('retry', 'broken', 'first-try', '--run-id', 'second-try', '--wait', ...server);
    assert.equal(retry.code, 1, retry.err);
    assert.match(retry.out, /^second-try\n/);
    assert.match(retry.out, /broken second-try: failed/);
    const history = await trellis('history', 'broken', '--limit', '2', ...server);
    assert.equal(history.code, 0, history.err);
    const rows = history.out.trim().split('\n');
    assert.equal(rows.length, 3);
    assert.match(rows[1] ?? '', /^second-try +failed +\S+Z +\S+Z$/);
    assert.match(rows[2] ?? '', /^first-try +failed /);
    assert.match((await trellis('retry', 'broken', 'no-such-run', ...server)).err, /not_found/);
  });
});
