import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createSilentLogger, loadServerConfig, startCoordinator, type Coordinator } from '@trellis/coordinator';

const main = resolve(import.meta.dirname, '../src/main.ts');
const dir = mkdtempSync(join(tmpdir(), 'trellis-cli-'));
let coordinator: Coordinator;

/** Runs the real `trellis` entry point as a separate process. */
function trellis(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--conditions=source', '--import', import.meta.resolve('tsx'), main, ...args], { cwd: dir });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('close', (code) => done({ code: code ?? 1, out, err }));
  });
}

before(async () => {
  mkdirSync(join(dir, 'dags'));
  writeFileSync(join(dir, 'dags', 'hello.yaml'), 'params: [WHO=world]\nsteps:\n  - name: greet\n    command: echo hello $WHO\n');
  writeFileSync(join(dir, 'bad.yaml'), 'steps:\n  - name: a\n    retry_policy: {limit: -1}\n');
  const config = loadServerConfig({ cwd: dir, env: {}, overrides: { port: 0, grpcPort: 0, dagsDir: join(dir, 'dags'), dataDir: join(dir, 'data') } });
  coordinator = await startCoordinator(config, createSilentLogger(), { watch: false });
});

after(async () => {
  await coordinator.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('trellis command', () => {
  test('help for every command; unknown commands and flags are usage errors (exit 2)', async () => {
    for (const command of ['server', 'start', 'enqueue', 'status', 'stop', 'validate', 'dry']) {
      const res = await trellis(command, '--help');
      assert.equal(res.code, 0, command);
      assert.match(res.out, new RegExp(`Usage: trellis ${command === 'enqueue' ? 'start' : command}`));
    }
    assert.equal((await trellis('nope')).code, 2);
    const badFlag = await trellis('validate', '--bogus', 'x.yaml');
    assert.equal(badFlag.code, 2);
    assert.match(badFlag.err, /bogus/);
  });

  test('validate names every problem; exit 1 when invalid', async () => {
    const good = await trellis('validate', 'dags/hello.yaml');
    assert.equal(good.code, 0);
    const bad = await trellis('validate', 'bad.yaml', 'missing.yaml');
    assert.equal(bad.code, 1);
    assert.match(bad.out, /steps\[0\]\.retry_policy\.limit: must be a non-negative integer/);
    assert.match(bad.out, /cannot read missing\.yaml: ENOENT/);
  });

  test('validate fails for ssh and container; mail settings are valid with a warning', async () => {
    writeFileSync(join(dir, 'remote.yaml'), 'ssh: {host: build.internal}\nsteps:\n  - uname -a\n');
    writeFileSync(join(dir, 'boxed.yaml'), 'steps:\n  - {name: a, container: {image: alpine}, command: echo a}\n');
    writeFileSync(join(dir, 'mailer.yaml'), 'mail_on: {failure: true}\nsteps:\n  - echo a\n');
    const refused = await trellis('validate', 'remote.yaml', 'boxed.yaml');
    assert.equal(refused.code, 1);
    assert.match(refused.out, /remote\.yaml: 1 problem\(s\)\n {2}- ssh: running steps over SSH is not available in this build/);
    assert.match(refused.out, /boxed\.yaml: 1 problem\(s\)\n {2}- steps\[0\]\.container: running a step in a container is not available in this build/);
    const mailer = await trellis('validate', 'mailer.yaml');
    assert.equal(mailer.code, 0);
    assert.equal(mailer.out, 'mailer.yaml: valid (1 steps)\n  warning: mail_on.failure: no mail will be sent: mail delivery is not available in this build\n');
  });

  test('dry shows resolved params and the steps without running anything', async () => {
    const res = await trellis('dry', 'dags/hello.yaml', '--params', 'WHO=cli');
    assert.equal(res.code, 0);
    assert.match(res.out, /WHO=cli/);
    assert.match(res.out, /greet \[shell\]: echo hello \$WHO/);
  });

  test('start, status --follow and stop against a running coordinator', async () => {
    const server = ['--server', coordinator.apiUrl];
    const started = await trellis('start', 'hello', '--params', '{"WHO": "cli"}', ...server);
    assert.equal(started.code, 0, started.err);
    const id = started.out.trim();
    const status = await trellis('status', 'hello', id, '--follow', ...server);
    assert.equal(status.code, 0);
    assert.match(status.out, new RegExp(`hello ${id}: succeeded`));
    const stop = await trellis('stop', 'hello', id, ...server);
    assert.equal(stop.code, 1);
    assert.match(stop.err, /not_running/);
    const missing = await trellis('start', 'nope', ...server);
    assert.match(missing.err, /not_found: DAG not found/);
  });
});
