// Runtime profiles across real processes on PostgreSQL: a webhook call selects a protected
// profile on its allowlist, the run goes to a worker daemon, and its steps see the profile's
// variables and secrets (masked in what they print); then the operator rotates the secrets key
// (restart with new and old key, `rotate-key`, restart with the new key alone) and runs still
// read every secret.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Cluster, stopProcess, waitFor } from './support/cluster.js';

const OLD = randomBytes(32).toString('base64');
const NEW = randomBytes(32).toString('base64');
const API_TOKEN = `tok-${randomBytes(8).toString('hex')}`;
const GLOBAL_SECRET = `glob-${randomBytes(8).toString('hex')}`;
const reversed = (text: string): string => [...text].reverse().join('');

const cluster = new Cluster({
  dags: {
    // `rev` shows that the step saw each secret without printing it (which would be masked).
    hooked: `worker_selector:\n  pool: profiles\nsteps:\n  - name: show\n    command: sh -c 'echo "region=$REGION token=$API_TOKEN"; printf "%s %s" "$API_TOKEN" "$GLOBAL_SECRET" | rev; echo'\n  - name: sub\n    call: copier\n    params: "COPY=\${API_TOKEN}"\n`,
    // Handed the secret through its params: they are kept sealed for retries, and must open after a rotation.
    copier: `params:\n  - COPY: ""\nsteps:\n  - name: copy\n    command: sh -c 'echo "copy=$COPY"; printf "%s" "$COPY" | rev; echo'\n`,
  },
  config: 'secretsKeyFile: ./secrets.key\n',
});
let hookToken = '';

function useKeys(...keys: string[]): void {
  writeFileSync(join(cluster.dir, 'secrets.key'), `${keys.join('\n')}\n`, { mode: 0o600 });
}

async function ok(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await cluster.call(method, path, body);
  assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${JSON.stringify(res.json)}`);
  return res.json;
}

async function ended(dag: string, dagRunId: string): Promise<{ status: number; profileName: string; attemptId: string; nodes: Array<{ subRuns: Array<{ dagRunId: string }> }> }> {
  return waitFor(`${dag} ${dagRunId} to end`, async () => {
    const { dagRun } = (await cluster.call('GET', `/dag-runs/${dag}/${dagRunId}`)).json as { dagRun: { status: number; profileName: string; attemptId: string; nodes: Array<{ subRuns: Array<{ dagRunId: string }> }> } };
    return [2, 4].includes(dagRun.status) ? dagRun : undefined;
  }, 60_000);
}

let copierRunId = '';

/** A webhook call with X-Svc-Profile; the run's step log once it ended. */
async function hookRun(profile: string): Promise<{ status: number; profileName: string; workerLog: string }> {
  const res = await fetch(`${cluster.api}/webhooks/hooked`, {
    method: 'POST',
    headers: { authorization: `Bearer ${hookToken}`, 'content-type': 'application/json', 'x-svc-profile': profile },
    body: '{}',
  });
  const body = (await res.json()) as { dagRunId: string };
  assert.equal(res.status, 200, JSON.stringify(body));
  const run = await ended('hooked', body.dagRunId);
  copierRunId = run.nodes[1]?.subRuns[0]?.dagRunId ?? '';
  const log = (await ok('GET', `/dag-runs/hooked/${body.dagRunId}/steps/show/log`)).content as string;
  return { status: run.status, profileName: run.profileName, workerLog: log };
}

async function restartWith(...keys: string[]): Promise<void> {
  if (cluster.coordinator !== undefined) await stopProcess(cluster.coordinator);
  useKeys(...keys);
  await cluster.startCoordinator();
  await cluster.workerReady('profiles-worker');
}

function assertSawSecrets(run: { status: number; profileName: string; workerLog: string }, what: string): void {
  assert.equal(run.status, 4, `${what}: ${run.workerLog}`);
  assert.equal(run.profileName, 'vault');
  assert.match(run.workerLog, /region=eu-1 token=\*{7}/, what);
  assert.ok(run.workerLog.includes(`${reversed(GLOBAL_SECRET)} ${reversed(API_TOKEN)}`), `${what}: the step saw both secrets: ${run.workerLog}`);
  assert.ok(!run.workerLog.includes(API_TOKEN) && !run.workerLog.includes(GLOBAL_SECRET), what);
}

async function assertCopierSaw(dagRunId: string, what: string): Promise<void> {
  const run = await ended('copier', dagRunId);
  const log = (await ok('GET', `/dag-runs/copier/${dagRunId}/steps/copy/log`)).content as string;
  assert.equal(run.status, 4, `${what}: ${log}`);
  assert.match(log, /copy=\*{7}/, what);
  assert.ok(log.includes(reversed(API_TOKEN)), `${what}: ${log}`);
}

before(async () => {
  useKeys(OLD);
  await cluster.start();
  cluster.startWorker('profiles-worker', 'pool=profiles');
  await cluster.workerReady('profiles-worker');
  await ok('POST', '/profiles', { name: 'vault', protected: true });
  await ok('PUT', '/profiles/vault/variables/REGION', { value: 'eu-1' });
  await ok('PUT', '/profiles/vault/secrets/API_TOKEN', { value: API_TOKEN });
  await ok('PUT', '/profiles/_global/secrets/GLOBAL_SECRET', { value: GLOBAL_SECRET });
  hookToken = (await ok('POST', '/dags/hooked/webhook', { profileAllowlist: ['vault'] })).token as string;
});
after(async () => cluster.stop());

describe('runtime profiles on workers', () => {
  test('a webhook run on a worker with the protected profile on its allowlist sees its values, masked', async () => {
    assertSawSecrets(await hookRun('vault'), 'first run');
    const [run] = await cluster.sql<{ worker_id: string }>(`SELECT worker_id FROM runs WHERE dag_name = 'hooked'`);
    assert.equal(run?.worker_id, 'profiles-worker');
  });

  test('key rotation: with new and old key, rotate-key re-seals every value; runs read them before, between and after', async () => {
    const sealedChild = copierRunId;
    await assertCopierSaw(sealedChild, 'the sub-run handed the secret');
    await restartWith(NEW, OLD);
    assertSawSecrets(await hookRun('vault'), 'new key current, values still under the old one');
    const rotated = await ok('POST', '/secrets/rotate-key');
    assert.deepEqual({ reencrypted: rotated.reencrypted, remaining: rotated.remaining }, { reencrypted: 2, remaining: {} });
    const keys = await cluster.sql<{ key_id: string }>('SELECT DISTINCT key_id FROM profile_secrets');
    assert.deepEqual(keys.map((k) => k.key_id), [rotated.keyId]);
    assertSawSecrets(await hookRun('vault'), 'after rotation');
    const sealedKeys = await cluster.sql<{ key_id: string }>('SELECT DISTINCT sealed_key_id AS key_id FROM run_secret_params');
    assert.deepEqual(sealedKeys.map((k) => k.key_id), [rotated.keyId], 'the sealed inputs of sub-runs are re-sealed too');
    await restartWith(NEW);
    assertSawSecrets(await hookRun('vault'), 'old key removed');
    // A retry of the first sub-run opens its inputs, sealed under the old key before the rotation.
    const before = await ended('copier', sealedChild);
    await ok('POST', `/dag-runs/copier/${sealedChild}/retry`, {});
    const retried = await waitFor('the retried sub-run to end', async () => {
      const run = await ended('copier', sealedChild);
      return run.attemptId !== before.attemptId ? run : undefined;
    }, 60_000);
    assert.equal(retried.profileName, 'vault');
    await assertCopierSaw(sealedChild, 'the retried sub-run');
  });
});
