// docker-compose.yml's auth wiring, without a Docker engine: the one-shot `setup` service runs
// deploy/first-admin.mjs (in the image) to create the first admin from .env and an API key that
// Prometheus scrapes the private /metrics with; the script itself is run against a live
// coordinator in builtin mode.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, posix, resolve } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { ENV_KEYS, loadServerConfig } from '@trellis/coordinator';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';
import { bearer, callWith } from './support/auth-fixtures.js';

const ROOT = resolve(import.meta.dirname, '..', '..', '..');
const SCRIPT = 'deploy/first-admin.mjs';
const run = promisify(execFile);

type Json = Record<string, unknown>;

const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');
const record = (value: unknown, what: string): Json => {
  assert.ok(typeof value === 'object' && value !== null && !Array.isArray(value), `${what} is a mapping`);
  return value as Json;
};
const strings = (value: unknown, what: string): string[] => {
  assert.ok(Array.isArray(value) && value.every((v): v is string => typeof v === 'string'), `${what} is a list of strings`);
  return value;
};

/** `${NAME:?message}` refuses to expand when NAME is unset, as `docker compose` does; `${NAME:-x}` takes x. */
function interpolate(value: string, given: Record<string, string> = {}): string {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?-|:\?)([^}]*))?\}/g, (_m, name: string, op: string | undefined, arg: string | undefined) => {
    const set = given[name];
    if (set !== undefined && set !== '') return set;
    if (op === ':?') throw new Error(`required variable ${name} is not set`);
    return arg ?? '';
  });
}

/** The volume mounted at `target` (named volume, or bind source). */
function volumeAt(service: Json, target: string, what: string): string | undefined {
  return strings(service.volumes ?? [], `${what} volumes`).map((v) => v.split(':')).find((parts) => parts[1] === target)?.[0];
}

describe('docker-compose.yml: builtin auth, the first admin from .env, Prometheus with an API key', () => {
  const compose = record(parse(read('docker-compose.yml'), { merge: true }), 'docker-compose.yml');
  const services = record(compose.services, 'services');
  const service = (name: string): Json => record(services[name], `service ${name}`);
  const env = (name: string): Record<string, string> => Object.fromEntries(Object.entries(record(service(name).environment, `${name} environment`)).map(([k, v]) => [k, String(v)]));

  test('the coordinator runs in builtin mode with private metrics', () => {
    const coordinatorEnv = env('coordinator');
    assert.ok('SVC_METRICS' in ENV_KEYS);
    const config = loadServerConfig({ env: Object.fromEntries(Object.entries(coordinatorEnv).map(([k, v]) => [k, interpolate(v, { SVC_WORKER_TOKEN: 'x', SVC_SECRETS_KEY: Buffer.alloc(32, 7).toString('base64') })])), cwd: '/app' });
    assert.equal(config.auth.mode, 'builtin');
    assert.equal(config.metrics, 'private');
  });

  test('`setup` runs the script the image holds, once, after the coordinator is healthy, with the admin from .env', () => {
    const setup = service('setup');
    assert.equal(setup.image, service('coordinator').image, 'the Trellis image');
    assert.equal(setup.restart, 'no', 'a one-shot service');
    assert.deepEqual(record(setup.depends_on, 'setup depends_on').coordinator, { condition: 'service_healthy' });
    const entrypoint = strings(setup.entrypoint, 'setup entrypoint');
    assert.deepEqual(entrypoint, ['node', `/app/${SCRIPT}`]);
    const dockerfile = read('deploy/Dockerfile');
    assert.match(dockerfile, /^WORKDIR \/app$/m);
    assert.match(dockerfile, new RegExp(`^COPY ${SCRIPT.replace(/\./g, '\\.')} \\./${SCRIPT.replace(/\./g, '\\.')}$`, 'm'), 'the image holds the script where the entrypoint runs it');
    assert.ok(!read('.dockerignore').split('\n').some((line) => line.trim() === 'deploy' || line.trim() === SCRIPT), 'the script reaches the build');
    const setupEnv = env('setup');
    const readByScript = new Set([...read(SCRIPT).matchAll(/process\.env\.(SVC_[A-Z_]+)/g)].map((m) => m[1] ?? ''));
    assert.deepEqual(Object.keys(setupEnv).sort(), [...readByScript].sort(), 'setup sets exactly the variables the script reads');
    for (const variable of ['SVC_ADMIN_USERNAME', 'SVC_ADMIN_PASSWORD']) {
      assert.throws(() => interpolate(setupEnv[variable] ?? ''), new RegExp(`required variable ${variable}`), `${variable} has no default`);
    }
    const url = new URL(setupEnv.SVC_SERVER_URL ?? '');
    assert.equal(url.host, 'coordinator:8080');
    assert.equal(url.pathname, '/api/v1');
  });

  test('Prometheus reads the key file `setup` writes, from a volume they share, and starts after `setup` succeeded', () => {
    const prometheus = parse(read('deploy/prometheus/prometheus.yml')) as { scrape_configs: Array<{ job_name: string; authorization?: { type?: string; credentials_file?: string } }> };
    const job = prometheus.scrape_configs.find((j) => j.job_name === 'trellis-coordinator');
    assert.equal(job?.authorization?.type, 'Bearer');
    const credentials = job?.authorization?.credentials_file ?? '';
    assert.ok(posix.isAbsolute(credentials), 'prometheus.yml names the key file');
    const keyFile = env('setup').SVC_METRICS_KEY_FILE ?? '';
    const shared = volumeAt(service('setup'), posix.dirname(keyFile), 'setup');
    assert.ok(shared !== undefined && !shared.startsWith('.'), `setup mounts a named volume at ${posix.dirname(keyFile)}`);
    assert.ok(compose.volumes !== null && shared in record(compose.volumes, 'volumes'), `${shared} is declared`);
    assert.equal(volumeAt(service('prometheus'), posix.dirname(credentials), 'prometheus'), shared, 'prometheus mounts the same volume where prometheus.yml looks');
    assert.ok(strings(service('prometheus').volumes, 'prometheus volumes').some((v) => v.startsWith(`${shared}:`) && v.endsWith(':ro')), 'read-only for prometheus');
    assert.equal(posix.basename(credentials), posix.basename(keyFile));
    assert.deepEqual(record(service('prometheus').depends_on, 'prometheus depends_on').setup, { condition: 'service_completed_successfully' });
    // A fresh named volume takes the owner of the image directory it is mounted on: the non-root user must own it.
    assert.match(read('deploy/Dockerfile'), new RegExp(`chown -R node:node [^\\n]*${posix.dirname(keyFile).replace(/\//g, '\\/')}`));
  });
});

describe('deploy/first-admin.mjs against a coordinator in builtin mode with private metrics', () => {
  let t: TestCoordinator;
  let keyFile = '';
  const password = 'compose admin password';

  async function script(given: Record<string, string>): Promise<{ code: number; output: string }> {
    try {
      const { stdout, stderr } = await run(process.execPath, [join(ROOT, SCRIPT)], { env: { PATH: process.env.PATH ?? '', SVC_SERVER_URL: t.coordinator.apiUrl, ...given }, timeout: 20_000 });
      return { code: 0, output: stdout + stderr };
    } catch (error) {
      const failed = error as { code?: number; stdout?: string; stderr?: string };
      return { code: failed.code ?? -1, output: (failed.stdout ?? '') + (failed.stderr ?? '') };
    }
  }

  const scrapeWith = async (file: string): Promise<number> => (await callWith(t.coordinator.apiUrl, 'GET', '/metrics', bearer(readFileSync(file, 'utf8').trim()))).status;

  before(async () => {
    t = await startTestCoordinator('deploy-first-admin', {}, { auth: { mode: 'builtin' }, metrics: 'private' });
    keyFile = join(t.dir, 'secrets-prometheus-api-key');
  });
  after(async () => {
    await t.stop();
  });

  test('without the admin variables, or with a weak password, it fails and says why', async () => {
    const missing = await script({ SVC_METRICS_KEY_FILE: keyFile });
    assert.equal(missing.code, 1);
    assert.match(missing.output, /set SVC_ADMIN_USERNAME and SVC_ADMIN_PASSWORD/);
    const weak = await script({ SVC_ADMIN_USERNAME: 'admin', SVC_ADMIN_PASSWORD: 'short', SVC_METRICS_KEY_FILE: keyFile });
    assert.equal(weak.code, 1);
    assert.match(weak.output, /POST \/auth\/setup: HTTP 400 bad_request/);
    assert.equal(existsSync(keyFile), false);
  });

  test('creates the admin and a viewer key that scrapes /metrics; a second run keeps both', async () => {
    assert.equal((await callWith(t.coordinator.apiUrl, 'GET', '/metrics')).status, 401, 'metrics are private');
    const first = await script({ SVC_ADMIN_USERNAME: 'admin', SVC_ADMIN_PASSWORD: password, SVC_METRICS_KEY_FILE: keyFile });
    assert.equal(first.code, 0, first.output);
    assert.match(first.output, /created the first admin "admin"/);
    assert.doesNotMatch(first.output, new RegExp(`${password}|svc_`), 'never prints the password or the key');
    assert.equal(await scrapeWith(keyFile), 200);
    const key = readFileSync(keyFile, 'utf8');
    const login = await callWith(t.coordinator.apiUrl, 'POST', '/auth/login', undefined, { username: 'admin', password });
    assert.equal(login.status, 200, 'the admin logs in with the password from .env');
    const again = await script({ SVC_ADMIN_USERNAME: 'admin', SVC_ADMIN_PASSWORD: password, SVC_METRICS_KEY_FILE: keyFile });
    assert.equal(again.code, 0, again.output);
    assert.match(again.output, /an admin exists already[\s\S]*holds a working API key/);
    assert.equal(readFileSync(keyFile, 'utf8'), key, 'the working key is kept');
    const keys = await callWith(t.coordinator.apiUrl, 'GET', '/api-keys', bearer(String(login.json.token)));
    assert.deepEqual((keys.json.apiKeys as Array<{ name: string; role: string }>).map((k) => [k.name, k.role]), [['prometheus', 'viewer']]);
  });

  test('a lost key file gets a new key in place of the old one; a changed password without a key file fails', async () => {
    const admin = bearer(String((await callWith(t.coordinator.apiUrl, 'POST', '/auth/login', undefined, { username: 'admin', password })).json.token));
    const old = readFileSync(keyFile, 'utf8');
    rmSync(keyFile);
    const replaced = await script({ SVC_ADMIN_USERNAME: 'admin', SVC_ADMIN_PASSWORD: password, SVC_METRICS_KEY_FILE: keyFile });
    assert.equal(replaced.code, 0, replaced.output);
    assert.notEqual(readFileSync(keyFile, 'utf8'), old);
    assert.equal(await scrapeWith(keyFile), 200);
    assert.equal((await callWith(t.coordinator.apiUrl, 'GET', '/metrics', bearer(old.trim()))).status, 401, 'the old key is gone');
    const keys = await callWith(t.coordinator.apiUrl, 'GET', '/api-keys', admin);
    assert.deepEqual((keys.json.apiKeys as Array<{ name: string }>).map((k) => k.name), ['prometheus']);
    rmSync(keyFile);
    const wrong = await script({ SVC_ADMIN_USERNAME: 'admin', SVC_ADMIN_PASSWORD: 'not the password any more', SVC_METRICS_KEY_FILE: keyFile });
    assert.equal(wrong.code, 1);
    assert.match(wrong.output, /POST \/auth\/login as "admin".*HTTP 401/);
    assert.equal(existsSync(keyFile), false);
    assert.ok(existsSync(dirname(keyFile)));
  });
});
