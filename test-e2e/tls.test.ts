// Workers over TLS with client certificates: a worker with a certificate from the trusted CA
// runs work; one with a certificate from another CA never gets in.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, waitFor } from './support/cluster.js';
import { makeCerts, type TestCerts } from './support/certs.js';

const certDir = mkdtempSync(join(tmpdir(), 'trellis-certs-'));
let certs: TestCerts;
let cluster: Cluster;

before(async () => {
  certs = makeCerts(certDir);
  cluster = new Cluster({
    dags: { secure: 'worker_selector:\n  pool: tls\nsteps:\n  - echo over tls\n' },
    serverArgs: ['--grpc-tls-cert', certs.serverCert, '--grpc-tls-key', certs.serverKey, '--grpc-tls-client-ca', certs.ca],
  });
  await cluster.start();
});

after(async () => {
  await cluster.stop();
  rmSync(certDir, { recursive: true, force: true });
});

describe('TLS between workers and the coordinator', () => {
  test('a worker with a trusted client certificate runs work', async () => {
    cluster.startWorker('tls-worker', 'pool=tls', { args: ['--tls-ca', certs.ca, '--tls-cert', certs.clientCert, '--tls-key', certs.clientKey] });
    await cluster.workerReady('tls-worker');
    assert.equal((await cluster.call('POST', '/dags/secure/start', { dagRunId: 's1' })).status, 200);
    const status = await waitFor('the run to succeed', async () => {
      const run = (await cluster.call('GET', '/dag-runs/secure/s1')).json.dagRun as { status: number };
      return run.status === 4 ? run.status : undefined;
    }, 30_000);
    assert.equal(status, 4);
  });

  test('a worker with a certificate from another CA, or none, cannot register', async () => {
    cluster.startWorker('stranger', 'pool=tls', { args: ['--tls-ca', certs.ca, '--tls-cert', certs.strangerCert, '--tls-key', certs.strangerKey] });
    cluster.startWorker('plaintext', 'pool=tls');
    await new Promise((r) => setTimeout(r, 4000));
    const workers = (await cluster.call('GET', '/workers')).json as { workers: Array<{ id: string }> };
    assert.deepEqual(workers.workers.map((w) => w.id), ['tls-worker']);
    assert.match(cluster.workers.get('stranger')?.output() ?? '', /coordinator unreachable; retrying registration/);
  });
});
