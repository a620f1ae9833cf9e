// `trellis profiles` and `trellis secrets` against a real coordinator (PGlite or a PostgreSQL
// schema), as a user types them: secrets come from standard input, never from argv.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, mkdirSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openTestDb } from '@trellis/store/testing';
import { createSilentLogger, loadServerConfig, startCoordinator, type Coordinator } from '@trellis/coordinator';
import { spawnTrellis, trellis as trellisIn } from './support/trellis.js';

const dir = mkdtempSync(join(tmpdir(), 'trellis-cli-profiles-'));
const MARKER = `cli-marker-${randomBytes(6).toString('hex')}`;
let coordinator: Coordinator;
let cleanup: () => Promise<void>;
let server: string[];

const trellis = (...args: string[]) => trellisIn(dir, ...args);

async function withStdin(input: string, ...args: string[]) {
  const running = spawnTrellis(dir, args);
  running.child.stdin?.end(input);
  return running.finished;
}

before(async () => {
  mkdirSync(join(dir, 'dags'));
  writeFileSync(join(dir, 'dags', 'stage.yaml'), 'steps:\n  - name: show\n    command: echo "stage=$STAGE"\n');
  const opened = await openTestDb('cli_profiles');
  cleanup = opened.cleanup;
  const config = loadServerConfig({ cwd: dir, env: {}, overrides: { port: 0, grpcPort: -1, dagsDir: join(dir, 'dags'), dataDir: join(dir, 'data'), secretsKey: randomBytes(32).toString('base64') } });
  coordinator = await startCoordinator(config, createSilentLogger(), { watch: false, db: opened.db });
  server = ['--server', coordinator.apiUrl];
});

after(async () => {
  await coordinator.close();
  await cleanup();
  rmSync(dir, { recursive: true, force: true });
});

describe('trellis profiles', () => {
  test('help for each command', async () => {
    for (const command of [['profiles', 'list'], ['profiles', 'set-variable'], ['profiles', 'set-secret'], ['profiles', 'delete'], ['secrets', 'rotate-key']]) {
      const res = await trellis(...command, '--help');
      assert.equal(res.code, 0, command.join(' '));
      assert.match(res.out, new RegExp(`Usage: trellis ${command.join(' ')}`));
    }
    assert.match((await trellis('profiles', 'set-secret', '--help')).out, /standard input/);
    const tooMany = await trellis('profiles', 'set-secret', 'prod', 'KEY', 'value-on-argv', ...server);
    assert.equal(tooMany.code, 2, 'a secret value on the command line is a usage error');
  });

  test('set-variable, set-secret from stdin, list, delete; the secret never printed', async () => {
    assert.equal((await coordinator.profiles.list({ kind: 'anonymous', id: 'anonymous', name: 'anonymous', role: 'admin' })).length, 0);
    await fetch(`${coordinator.apiUrl}/profiles`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'prod', description: 'live' }) });
    const variable = await trellis('profiles', 'set-variable', 'prod', 'REGION', 'eu', ...server);
    assert.deepEqual([variable.code, variable.out], [0, 'set variable REGION of prod\n']);
    const secret = await withStdin(`${MARKER}\n`, 'profiles', 'set-secret', 'prod', 'DB_PASSWORD', ...server);
    assert.equal(secret.code, 0, secret.err);
    assert.match(secret.out, /^set secret DB_PASSWORD of prod \(secret id [0-9a-f-]{36}\)\n$/);
    const resolved = await coordinator.profiles.resolve({ profileName: 'prod' });
    assert.equal(resolved.entries.find((e) => e.key === 'DB_PASSWORD')?.value, MARKER, 'one trailing line break dropped');
    const global = await withStdin('g', 'profiles', 'set-secret', '_global', 'TOKEN', ...server);
    assert.equal(global.code, 0, global.err);
    const listed = await trellis('profiles', 'list', ...server);
    assert.match(listed.out, /^NAME +STATUS +PROTECTED +ENTRIES +DESCRIPTION\nprod +active +no +2 +live\n$/);
    const entries = await trellis('profiles', 'list', 'prod', ...server);
    assert.match(entries.out, /DB_PASSWORD +secret +\(secret [0-9a-f-]{36}\)\nREGION +variable +eu\n/);
    assert.ok(!entries.out.includes(MARKER));
    const bad = await trellis('profiles', 'set-variable', 'prod', 'SVC_X', 'v', ...server);
    assert.equal(bad.code, 1);
    assert.match(bad.err, /^bad_request: .*reserved/);
    assert.equal((await trellis('profiles', 'delete', 'prod', 'REGION', ...server)).code, 0);
    assert.equal((await trellis('profiles', 'delete', 'prod', 'REGION', ...server)).code, 1);
    const rotated = await trellis('secrets', 'rotate-key', ...server);
    assert.equal(rotated.code, 0, rotated.err);
    assert.match(rotated.out, /^re-encrypted 0 secrets under key [0-9a-f]{16}\n$/);
    assert.equal((await trellis('profiles', 'delete', 'prod', ...server)).code, 0);
    assert.match((await trellis('profiles', 'list', 'prod', ...server)).err, /^not_found/);
  });

  test('start and enqueue --profile run with the profile; an unknown one is refused', async () => {
    await fetch(`${coordinator.apiUrl}/profiles`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'staging' }) });
    assert.equal((await trellis('profiles', 'set-variable', 'staging', 'STAGE', 'two', ...server)).code, 0);
    // The Global secret "g" of the test above would mask every g the step prints.
    assert.equal((await trellis('profiles', 'delete', '_global', 'TOKEN', ...server)).code, 0);
    const started = await trellis('start', 'stage', '--profile', 'staging', '--wait', ...server);
    assert.equal(started.code, 0, started.err);
    const dagRunId = started.out.split('\n')[0] ?? '';
    const run = (await (await fetch(`${coordinator.apiUrl}/dag-runs/stage/${dagRunId}`)).json()) as { dagRun: { profileName: string } };
    assert.equal(run.dagRun.profileName, 'staging');
    const log = (await (await fetch(`${coordinator.apiUrl}/dag-runs/stage/${dagRunId}/steps/show/log`)).json()) as { content: string };
    assert.match(log.content, /stage=two/);
    const refused = await trellis('enqueue', 'stage', '--profile', 'nope', ...server);
    assert.equal(refused.code, 1);
    assert.match(refused.err, /^not_found: Profile nope not found/);
  });
});
