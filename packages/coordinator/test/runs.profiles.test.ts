// Runtime profiles applied to runs, on PGlite or PostgreSQL: the layers (Global, workspace,
// profile) as env vars, secrets masked, step env on top; what a run records (name and entry
// metadata, never values); refusals at start and failures at execution; retries and sub-DAG
// runs keeping the profile and resolving it afresh; a webhook choosing one from its allowlist.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';
import { startWorkerProcess } from './support/worker-process.js';
import { captureLog } from './support/log-capture.js';

type Json = Record<string, unknown>;
const SECRET = `s3cr3t-${randomBytes(6).toString('hex')}`;
const VAULT_SECRET = `vault-${randomBytes(6).toString('hex')}`;
const reversed = (text: string): string => [...text].reverse().join('');

// `rev` shows what the step saw without printing the value itself (which would be masked).
const SHOW = 'echo "G=$G W=$W P=$P OVERRIDE=$OVERRIDE S=$S"; printf "%s" "$S" | rev; echo';
const DAGS = {
  prof: `labels: workspace=team\nsteps:\n  - name: show\n    env:\n      - OVERRIDE: from-step\n    command: sh -c '${SHOW}'\n  - name: out\n    command: sh -c 'echo "$S"'\n    output: SOUT\n`,
  slow: 'steps:\n  - name: nap\n    command: sleep 2\n',
  remote: `worker_selector:\n  pool: rp\nsteps:\n  - name: show\n    command: sh -c '${SHOW}'\n`,
  parent: 'steps:\n  - name: child\n    call: child\n',
  child: `steps:\n  - name: show\n    command: sh -c '${SHOW}'\n`,
};

let t: TestCoordinator;

async function ok(method: string, path: string, body?: unknown): Promise<Json> {
  const res = await t.call(method, path, body);
  assert.ok(res.status >= 200 && res.status < 300, `${method} ${path}: ${res.status} ${JSON.stringify(res.json)}`);
  return res.json;
}

async function started(name: string, body: Json = {}): Promise<Json> {
  const { dagRunId } = (await ok('POST', `/dags/${name}/start`, body)) as { dagRunId: string };
  return t.waitForRunStatus(name, dagRunId, [2, 3, 4, 6]);
}

async function stepLog(name: string, dagRunId: string, step: string): Promise<string> {
  return String((await ok('GET', `/dag-runs/${name}/${dagRunId}/steps/${step}/log`)).content);
}

before(async () => {
  t = await startTestCoordinator('runs_profiles', DAGS, { secretsKey: randomBytes(32).toString('base64') });
  await ok('POST', '/workspaces', { name: 'team' });
  for (const [layer, key, value] of [
    ['_global', 'G', 'global'],
    ['_global', 'OVERRIDE', 'from-global'],
    ['_global', 'P', 'global-p'],
    ['_workspaces/team', 'W', 'ws'],
    ['_workspaces/team', 'G', 'ws-g'],
  ] as const) {
    await ok('PUT', `/profiles/${layer}/variables/${key}`, { value });
  }
  await ok('POST', '/profiles', { name: 'prod' });
  await ok('PUT', '/profiles/prod/variables/P', { value: 'prod-p' });
  await ok('PUT', '/profiles/prod/secrets/S', { value: SECRET });
});
after(async () => t.stop());

describe('runs with runtime profiles', () => {
  let first: Json;

  test('layers become env vars (later layers win, step env over all), secrets are masked; the run records name and metadata', async () => {
    first = await started('prof', { profileName: 'prod' });
    assert.equal(first.status, 4, JSON.stringify(first));
    const log = await stepLog('prof', String(first.dagRunId), 'show');
    assert.match(log, /G=ws-g W=ws P=prod-p OVERRIDE=from-step S=\*{7}/);
    assert.ok(log.includes(reversed(SECRET)), 'the step saw the secret');
    assert.ok(!log.includes(SECRET));
    assert.equal(first.profileName, 'prod');
    assert.deepEqual(first.profileEntries, [
      { key: 'G', kind: 'variable', layer: 'workspace' },
      { key: 'OVERRIDE', kind: 'variable', layer: 'global' },
      { key: 'P', kind: 'variable', layer: 'profile' },
      { key: 'S', kind: 'secret', layer: 'profile' },
      { key: 'W', kind: 'variable', layer: 'workspace' },
    ]);
    const outputs = await ok('GET', `/dag-runs/prof/${String(first.dagRunId)}/outputs`);
    assert.deepEqual(outputs.outputs, { sout: '*******' });
    const [row] = await t.coordinator.db.query<{ profile_entries: unknown }>('SELECT profile_entries FROM runs WHERE dag_run_id = $1', [first.dagRunId]);
    assert.ok(!JSON.stringify(row).includes(SECRET) && !JSON.stringify(row).includes('prod-p'), 'metadata only, no values');
  });

  test('without a profile the run gets the defaults layers only', async () => {
    const run = await started('prof');
    assert.match(await stepLog('prof', String(run.dagRunId), 'show'), /G=ws-g W=ws P=global-p OVERRIDE=from-step S=\n/);
    assert.equal(run.profileName, '');
    assert.deepEqual((run.profileEntries as Json[]).map((e) => `${String(e.key)}:${String(e.layer)}`), ['G:workspace', 'OVERRIDE:global', 'P:global', 'W:workspace']);
  });

  test('the X-Svc-Profile header chooses the profile on start, start-sync, enqueue and the inline starts; naming another than the body: 400', async () => {
    const post = async (path: string, body: Json, profile: string) => {
      const res = await fetch(`${t.coordinator.apiUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'X-Svc-Profile': profile }, body: JSON.stringify(body) });
      return { status: res.status, json: (await res.json()) as Json };
    };
    const inline = { spec: 'steps:\n  - echo hi\n', name: 'inline_prof' };
    const starts: Array<[string, Json, string]> = [
      ['/dags/child/start', {}, 'child'],
      ['/dags/child/enqueue', {}, 'child'],
      ['/dag-runs', inline, 'inline_prof'],
      ['/dag-runs/enqueue', inline, 'inline_prof'],
      ['/dags/child/start', { profileName: 'prod' }, 'child'],
    ];
    for (const [path, body, dagName] of starts) {
      const res = await post(path, body, 'prod');
      assert.equal(res.status, 200, `${path}: ${JSON.stringify(res.json)}`);
      assert.equal((await t.waitForRunStatus(dagName, String(res.json.dagRunId), [2, 4])).profileName, 'prod', path);
    }
    const synced = await post('/dags/child/start-sync', { timeout: 60 }, 'prod');
    assert.equal(synced.status, 200, JSON.stringify(synced.json));
    assert.equal((synced.json.dagRun as Json).profileName, 'prod');
    const clash = await post('/dags/child/start', { profileName: 'later' }, 'prod');
    assert.deepEqual([clash.status, clash.json.code, clash.json.message], [400, 'bad_request', 'the X-Svc-Profile header (prod) and body.profileName (later) name different profiles: name one']);
    for (const path of ['/dags/child/enqueue', '/dag-runs']) {
      const malformed = await post(path, path === '/dag-runs' ? inline : {}, 'Not A Slug');
      assert.deepEqual([malformed.status, malformed.json.code], [400, 'bad_request'], path);
      assert.match(String(malformed.json.message), /^header\.X-Svc-Profile: a profile name is a lowercase slug/);
    }
    const missing = await post('/dags/child/start', {}, 'nope');
    assert.deepEqual([missing.status, missing.json.code], [404, 'not_found']);
    // The document declares the header on each of them (and on the webhook call).
    const doc = (await ok('GET', '/openapi.json')) as { paths: Record<string, Record<string, { parameters: Json[] }>> };
    for (const path of ['/dags/{fileName}/start', '/dags/{fileName}/start-sync', '/dags/{fileName}/enqueue', '/dag-runs', '/dag-runs/enqueue', '/webhooks/{fileName}']) {
      const header = doc.paths[path]?.post?.parameters.find((p) => p.in === 'header');
      assert.deepEqual([header?.name, header?.required, (header?.schema as Json | undefined)?.pattern], ['X-Svc-Profile', false, '^[a-z0-9][a-z0-9._-]*$'], path);
    }
  });

  test('a retry keeps the profile and resolves its values again; so does a new run made by retry', async () => {
    await ok('PUT', '/profiles/prod/variables/P', { value: 'prod-p2' });
    const id = String(first.dagRunId);
    await ok('POST', `/dag-runs/prof/${id}/retry`, {});
    // The retry is queued under a new attempt before its answer: the wait sees that attempt.
    const again = await t.waitForRunStatus('prof', id, [2, 4]);
    assert.notEqual(again.attemptId, first.attemptId);
    assert.equal(again.profileName, 'prod');
    assert.match(await stepLog('prof', id, 'show'), /P=prod-p2 .*S=\*{7}/);
    await ok('POST', `/dag-runs/prof/${id}/retry`, { dagRunId: `${id}-copy` });
    const copy = await t.waitForRunStatus('prof', `${id}-copy`, [2, 4]);
    assert.equal(copy.profileName, 'prod');
    assert.ok((await stepLog('prof', `${id}-copy`, 'show')).includes(reversed(SECRET)));
  });

  test('a sub-DAG run inherits the profile and resolves it for its own DAG (no workspace here)', async () => {
    const parent = await started('parent', { profileName: 'prod' });
    assert.equal(parent.status, 4, JSON.stringify(parent));
    const node = (parent.nodes as Json[])[0] as { subRuns: Array<{ dagRunId: string }> };
    const childId = node.subRuns[0]?.dagRunId ?? '';
    const child = (await ok('GET', `/dag-runs/child/${childId}`)).dagRun as Json;
    assert.equal(child.profileName, 'prod');
    const log = await stepLog('child', childId, 'show');
    assert.match(log, /G=global W= P=prod-p2 OVERRIDE=from-global S=\*{7}/);
    assert.ok(log.includes(reversed(SECRET)));
  });

  test('a missing or disabled profile refuses the start; one disabled while the run waits fails it with the reason', async () => {
    const missing = await t.call('POST', '/dags/prof/start', { profileName: 'nope' });
    assert.deepEqual([missing.status, missing.json.code, missing.json.message], [404, 'not_found', 'Profile nope not found']);
    await ok('POST', '/profiles', { name: 'later' });
    await ok('PUT', '/profiles/later/variables/P', { value: 'later-p' });
    await ok('PATCH', '/profiles/later', { status: 'disabled' });
    const disabled = await t.call('POST', '/dags/prof/enqueue', { profileName: 'later' });
    assert.deepEqual([disabled.status, disabled.json.code], [400, 'bad_request']);
    assert.match(String(disabled.json.message), /profile later is disabled/);
    await ok('PATCH', '/profiles/later', { status: 'active' });
    // A run of `slow` holds the DAG's queue (concurrency 1): the next one waits, and its profile is disabled meanwhile.
    const holder = (await ok('POST', '/dags/slow/start', {})).dagRunId as string;
    await t.waitForRunStatus('slow', holder, [1]);
    const waiting = (await ok('POST', '/dags/slow/enqueue', { profileName: 'later' })).dagRunId as string;
    assert.deepEqual(((await ok('GET', `/dag-runs/slow/${waiting}`)).dagRun as Json).profileEntries, [
      { key: 'G', kind: 'variable', layer: 'global' },
      { key: 'OVERRIDE', kind: 'variable', layer: 'global' },
      { key: 'P', kind: 'variable', layer: 'profile' },
    ]);
    await ok('PATCH', '/profiles/later', { status: 'disabled' });
    const failed = await t.waitForRunStatus('slow', waiting, [2, 4]);
    assert.equal(failed.status, 2);
    assert.match(String(failed.error), /^cannot start: runtime profile later: profile later is disabled/);
  });

  test('a webhook selects a profile on its allowlist with X-Svc-Profile (protected too), nothing else', async () => {
    await ok('POST', '/profiles', { name: 'vault', protected: true });
    await ok('PUT', '/profiles/vault/secrets/S', { value: VAULT_SECRET });
    const { token } = (await ok('POST', '/dags/prof/webhook', { profileAllowlist: ['vault'] })) as { token: string };
    const hook = (profile?: string) =>
      fetch(`${t.coordinator.apiUrl}/webhooks/prof`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(profile !== undefined ? { 'x-svc-profile': profile } : {}) },
        body: '{}',
      });
    const refused = await hook('prod');
    assert.equal(refused.status, 403);
    const res = await hook('vault');
    assert.equal(res.status, 200);
    const { dagRunId } = (await res.json()) as { dagRunId: string };
    const run = await t.waitForRunStatus('prof', dagRunId, [2, 4]);
    assert.equal(run.profileName, 'vault');
    assert.deepEqual(run.triggeredBy, { kind: 'webhook', id: (run.triggeredBy as Json).id, name: 'prof' });
    const log = await stepLog('prof', dagRunId, 'show');
    assert.ok(log.includes(reversed(VAULT_SECRET)) && !log.includes(VAULT_SECRET));
    assert.match(log, /P=global-p /, 'the vault profile has no P: the Global one shows');
  });

  test('a worker run: the task carries the values; a profile deleted while the run waited fails it before any worker holds it', async () => {
    await ok('POST', '/profiles', { name: 'temp' });
    const doomed = (await ok('POST', '/dags/remote/enqueue', { profileName: 'temp' })).dagRunId as string;
    await ok('DELETE', '/profiles/temp');
    const fine = (await ok('POST', '/dags/remote/enqueue', { profileName: 'prod' })).dagRunId as string;
    assert.ok(t.coordinator.grpcAddress);
    const worker = startWorkerProcess(t.coordinator.grpcAddress, 'profiles-worker', 'pool=rp', t.dir);
    try {
      const failed = await t.waitForRunStatus('remote', doomed, [2, 4], 60_000);
      assert.deepEqual([failed.status, failed.error], [2, 'cannot start: runtime profile temp: Profile temp not found']);
      const run = await t.waitForRunStatus('remote', fine, [2, 4], 60_000);
      assert.equal(run.status, 4, JSON.stringify(run));
      const log = await stepLog('remote', fine, 'show');
      assert.match(log, /G=global W= P=prod-p2 OVERRIDE=from-global S=\*{7}/);
      assert.ok(log.includes(reversed(SECRET)) && !log.includes(SECRET));
    } finally {
      await worker.stop();
    }
  });
});

describe('the worker channel that carries profile secrets', () => {
  test('beyond loopback without TLS, start-up warns that tasks cross the network unencrypted', async () => {
    const log = captureLog('warn');
    const open = await startTestCoordinator('runs_profiles_tls', {}, { grpcHost: '0.0.0.0', workerToken: 'a-worker-token' }, { logger: log.logger });
    await open.stop();
    assert.ok(log.lines().some((line) => line.level === 'warn' && /without TLS: tasks, and the profile secrets in them, cross the network unencrypted/.test(String(line.message))), log.text());
    const local = captureLog('warn');
    const loopback = await startTestCoordinator('runs_profiles_tls', {}, {}, { logger: local.logger });
    await loopback.stop();
    assert.ok(!/without TLS/.test(local.text()), 'on loopback it says nothing');
  });
});
