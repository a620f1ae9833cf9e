// Access control across real processes: two coordinators in builtin auth mode on one
// PostgreSQL database and a worker daemon. What one coordinator issues (login tokens, API keys,
// webhook tokens) the other accepts, a webhook run reaches the worker with its payload, and a
// user disabled on one coordinator is refused by both within a second.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { callAt, Cluster, freePort, stopProcess, waitFor, type Proc } from './support/cluster.js';

const TERMINAL = new Set([2, 3, 4, 6, 8]);
const ADMIN_PASSWORD = 'e2e first admin password';
const DEV_PASSWORD = 'e2e developer password';

/** A Pro license and the public key that verifies it, as a vendor would hand them out. */
function mintLicense(): { license: string; publicKey: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const license = jwt.sign({ plan: 'pro', customer: 'e2e' }, privateKey.export({ type: 'pkcs8', format: 'pem' }), { algorithm: 'RS256', expiresIn: '1h' });
  return { license, publicKey: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
}

const { license, publicKey } = mintLicense();
// JSON strings are YAML double-quoted scalars: the PEM's line breaks survive.
const authConfig = ['auth:', '  mode: builtin', '  tokenTtlSec: 3600', `  license: ${JSON.stringify(license)}`, `  licensePublicKey: ${JSON.stringify(publicKey)}`, ''].join('\n');

const cluster = new Cluster({
  dags: {
    hooked: 'worker_selector:\n  pool: hooks\nsteps:\n  - name: show\n    command: printenv WEBHOOK_PAYLOAD\n',
  },
  config: authConfig,
});

let second: Proc | undefined;
let secondApi = '';

const one = (method: string, path: string, authorization?: string, body?: unknown) => callAt(cluster.api, method, path, body, authorization);
const two = (method: string, path: string, authorization?: string, body?: unknown) => callAt(secondApi, method, path, body, authorization);
const bearer = (token: unknown): string => `Bearer ${String(token)}`;

before(async () => {
  await cluster.start();
  const httpPort = await freePort();
  second = await cluster.startCoordinatorProcess(httpPort, await freePort());
  secondApi = `http://127.0.0.1:${httpPort}/api/v1`;
  cluster.startWorker('hooks-worker', 'pool=hooks');
});

after(async () => {
  if (second !== undefined) await stopProcess(second);
  await cluster.stop();
});

describe('builtin auth across two coordinators, a worker and a webhook', () => {
  let admin = '';

  test('without credentials both coordinators answer 401; setup on one gives a token the other accepts', async () => {
    for (const call of [one, two]) assert.deepEqual(((r) => [r.status, r.json.code])(await call('GET', '/dags')), [401, 'unauthorized']);
    const setup = await one('POST', '/auth/setup', undefined, { username: 'admin', password: ADMIN_PASSWORD });
    assert.equal(setup.status, 200, JSON.stringify(setup.json));
    admin = bearer(setup.json.token);
    const me = await two('GET', '/auth/me', admin);
    assert.equal(me.status, 200, JSON.stringify(me.json));
    assert.deepEqual(me.json.principal, { kind: 'user', id: (setup.json.user as { id: string }).id, name: 'admin', role: 'admin' });
    assert.equal((await two('POST', '/auth/setup', undefined, { username: 'late', password: ADMIN_PASSWORD })).status, 403, 'setup happens once for the cluster');
    const login = await two('POST', '/auth/login', undefined, { username: 'admin', password: ADMIN_PASSWORD });
    assert.equal(login.status, 200);
    assert.equal((await one('GET', '/dags', bearer(login.json.token))).status, 200, 'a login on the second coordinator works on the first');
    cluster.authorization = admin;
    await cluster.workerReady('hooks-worker');
  });

  test('an API key made on one coordinator works on the other, within its role', async () => {
    const made = await one('POST', '/api-keys', admin, { name: 'e2e-ci', role: 'operator' });
    assert.equal(made.status, 201, JSON.stringify(made.json));
    const key = String(made.json.key);
    assert.match(key, /^svc_/);
    const listed = await two('GET', '/dags', bearer(key));
    assert.equal(listed.status, 200, JSON.stringify(listed.json));
    assert.ok((listed.json.dags as Array<{ fileName: string }>).some((d) => d.fileName === 'hooked'));
    assert.deepEqual(((r) => [r.status, r.json.code])(await two('GET', '/api-keys', bearer(key))), [403, 'forbidden'], 'an operator key manages no keys');
    assert.equal((await two('GET', '/dags', bearer(`${key}x`))).status, 401);
  });

  test('a webhook made on one coordinator, called on the other, starts a run the worker executes with WEBHOOK_PAYLOAD', async () => {
    const hook = await two('POST', '/dags/hooked/webhook', admin, {});
    assert.equal(hook.status, 201, JSON.stringify(hook.json));
    const token = String(hook.json.token);
    assert.match(token, /^svc_wh_/);
    const payload = { ref: 'refs/heads/main', commits: [{ id: 'abc123', message: 'it\'s "quoted"' }] };
    const call = await one('POST', '/webhooks/hooked', bearer(token), { payload, dagRunId: 'wh-1' });
    assert.equal(call.status, 200, JSON.stringify(call.json));
    assert.deepEqual(call.json, { dagRunId: 'wh-1', dagName: 'hooked' });
    const run = await waitFor('the webhook run to finish', async () => {
      const { json } = await two('GET', '/dag-runs/hooked/wh-1', admin);
      const dagRun = json.dagRun as { status: number; error: string } | undefined;
      return dagRun !== undefined && TERMINAL.has(dagRun.status) ? dagRun : undefined;
    }, 30_000);
    assert.equal(run.status, 4, run.error);
    const [row] = await cluster.sql<{ worker: string }>("SELECT worker_id AS worker FROM runs WHERE dag_name = 'hooked' AND dag_run_id = 'wh-1'");
    assert.equal(row?.worker, 'hooks-worker', 'the worker daemon ran it');
    const log = await two('GET', '/dag-runs/hooked/wh-1/steps/show/log', admin);
    assert.equal(log.status, 200, JSON.stringify(log.json));
    assert.deepEqual(JSON.parse(String(log.json.content).trim()), payload, 'the step saw the payload as JSON');
    assert.equal((await two('POST', '/webhooks/hooked', bearer(token), { payload, dagRunId: 'wh-1' })).status, 409, 'a dagRunId starts one run');
    assert.equal((await two('POST', '/webhooks/hooked', bearer(`${token}x`), { payload })).status, 401);
    assert.equal((await two('POST', '/webhooks/hooked', admin, { payload })).status, 401, 'only the webhook token calls it');
  });

  test("a user disabled on one coordinator has its token refused by both within 1 s, and cannot log in", async (t) => {
    const made = await one('POST', '/users', admin, { username: 'dev', password: DEV_PASSWORD, role: 'developer' });
    assert.equal(made.status, 201, JSON.stringify(made.json));
    const devId = (made.json.user as { id: string }).id;
    const login = await two('POST', '/auth/login', undefined, { username: 'dev', password: DEV_PASSWORD });
    assert.equal(login.status, 200);
    const dev = bearer(login.json.token);
    for (const call of [one, two]) assert.equal((await call('GET', '/dags', dev)).status, 200);
    const disabled = await two('PATCH', `/users/${devId}`, admin, { isDisabled: true });
    assert.equal(disabled.status, 200, JSON.stringify(disabled.json));
    const started = performance.now();
    const refusedAfter = async (call: typeof one): Promise<number> => {
      for (;;) {
        const { status } = await call('GET', '/dags', dev);
        if (status === 401) return performance.now() - started;
        assert.equal(status, 200);
        if (performance.now() - started > 5000) return Number.POSITIVE_INFINITY;
        await new Promise((r) => setTimeout(r, 25));
      }
    };
    const [onOne, onTwo] = await Promise.all([refusedAfter(one), refusedAfter(two)]);
    t.diagnostic(`refused after ${onOne.toFixed(0)} ms (first coordinator), ${onTwo.toFixed(0)} ms (second)`);
    assert.ok(onOne < 1000, `refused by the first coordinator after ${onOne.toFixed(0)} ms`);
    assert.ok(onTwo < 1000, `refused by the second coordinator after ${onTwo.toFixed(0)} ms`);
    for (const call of [one, two]) assert.equal((await call('POST', '/auth/login', undefined, { username: 'dev', password: DEV_PASSWORD })).status, 401);
  });
});
