import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadServerConfig } from '@trellis/coordinator';

const made: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-config-'));
  made.push(dir);
  return dir;
}

after(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

describe('server configuration', () => {
  test('defaults: 127.0.0.1:8080, ./data, ./dags, logs under the data dir, embedded database', () => {
    const cwd = tempDir();
    const config = loadServerConfig({ cwd, env: {} });
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.port, 8080);
    assert.equal(config.dataDir, join(cwd, 'data'));
    assert.equal(config.dagsDir, join(cwd, 'dags'));
    assert.equal(config.logDir, join(cwd, 'data', 'logs'));
    assert.equal(config.databaseUrl, undefined);
    assert.equal(config.apiBasePath, '/api/v1');
    assert.equal(config.histRetentionDays, 30);
  });

  test('file < SVC_* env < flags', () => {
    const cwd = tempDir();
    const file = join(cwd, 'trellis.yaml');
    writeFileSync(file, 'port: 9000\nhost: 0.0.0.0\nqueues:\n  - name: batch\n    maxConcurrency: 4\n');
    const config = loadServerConfig({ cwd, file, env: { SVC_PORT: '9100', SVC_ENV_PASSTHROUGH: 'FOO, BAR' }, overrides: { host: '127.0.0.2' } });
    assert.equal(config.port, 9100);
    assert.equal(config.host, '127.0.0.2');
    assert.deepEqual(config.queues, [{ name: 'batch', maxConcurrency: 4 }]);
    assert.deepEqual(config.envPassthrough, ['FOO', 'BAR']);
  });

  test('SVC_DATABASE_URL wins over DATABASE_URL', () => {
    const config = loadServerConfig({ cwd: tempDir(), env: { DATABASE_URL: 'postgres://a@h/x', SVC_DATABASE_URL: 'postgres://b@h/y' } });
    assert.equal(config.databaseUrl, 'postgres://b@h/y');
  });

  test('base.yaml beside the config file is the default base configuration', () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'trellis.yaml'), 'port: 1\n');
    writeFileSync(join(cwd, 'base.yaml'), 'env:\n  - A=1\n');
    assert.equal(loadServerConfig({ cwd, file: 'trellis.yaml', env: {} }).baseConfig, join(cwd, 'base.yaml'));
  });

  test('every bad value is reported at once, naming its key', () => {
    const cwd = tempDir();
    const file = join(cwd, 'bad.yaml');
    writeFileSync(file, 'port: 70000\ntimezone: Mars/Olympus\nunknownKey: 1\nqueues:\n  - name: q\n    maxConcurrency: 0\n');
    assert.throws(
      () => loadServerConfig({ cwd, file, env: { SVC_GRPC_PORT: 'abc' } }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        const text = error.problems.join('\n');
        assert.match(text, /SVC_GRPC_PORT: must be an integer/);
        assert.match(text, /^port: /m);
        assert.match(text, /^timezone: unknown IANA time zone/m);
        assert.match(text, /unknownKey/);
        assert.match(text, /^queues\.0\.maxConcurrency: /m);
        return true;
      },
    );
  });

  test('secret store keys: SVC_SECRETS_KEY, or a key file (current key first, then previous ones); bad keys named, never echoed', () => {
    const cwd = tempDir();
    const [a, b, c] = [1, 2, 3].map((n) => Buffer.alloc(32, n).toString('base64')) as [string, string, string];
    assert.deepEqual(loadServerConfig({ cwd, env: {} }).secretKeys, { previous: [] });
    assert.deepEqual(loadServerConfig({ cwd, env: { SVC_SECRETS_KEY: a, SVC_SECRETS_PREVIOUS_KEYS: `${b},${c}` } }).secretKeys, { current: a, previous: [b, c] });
    writeFileSync(join(cwd, 'keys'), `${a}\n\n${b}\n`);
    assert.deepEqual(loadServerConfig({ cwd, env: { SVC_SECRETS_KEY_FILE: 'keys', SVC_SECRETS_PREVIOUS_KEYS: c } }).secretKeys, { current: a, previous: [b, c] });
    const problems = (env: Record<string, string>): string => {
      try {
        loadServerConfig({ cwd, env });
      } catch (error) {
        assert.ok(error instanceof ConfigError);
        return error.problems.join('\n');
      }
      return '';
    };
    const short = Buffer.alloc(16, 7).toString('base64');
    const tooShort = problems({ SVC_SECRETS_KEY: short });
    assert.match(tooShort, /^secretsKey: must be 32 bytes in base64/m);
    assert.ok(!tooShort.includes(short), 'the value is not echoed');
    assert.match(problems({ SVC_SECRETS_KEY: a, SVC_SECRETS_KEY_FILE: 'keys' }), /not both/);
    assert.match(problems({ SVC_SECRETS_PREVIOUS_KEYS: 'nope' }), /^secretsPreviousKeys\.0: must be 32 bytes/m);
    writeFileSync(join(cwd, 'bad-keys'), `${a}\n${short}\n`);
    const badFile = problems({ SVC_SECRETS_KEY_FILE: 'bad-keys' });
    assert.match(badFile, /secretsKeyFile: line 2 is not 32 bytes in base64/);
    assert.ok(!badFile.includes(short));
    assert.match(problems({ SVC_SECRETS_KEY_FILE: 'missing-file' }), /^secretsKeyFile: ENOENT/m);
  });

  test('a missing or non-mapping config file is a clear error', () => {
    const cwd = tempDir();
    assert.throws(() => loadServerConfig({ cwd, file: 'nope.yaml', env: {} }), /config file .*nope\.yaml/);
    writeFileSync(join(cwd, 'list.yaml'), '- 1\n- 2\n');
    assert.throws(() => loadServerConfig({ cwd, file: 'list.yaml', env: {} }), /must be a YAML mapping/);
  });
});
