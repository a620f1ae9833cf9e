import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnTrellis, waitFor } from './support/trellis.js';

const dir = mkdtempSync(join(tmpdir(), 'trellis-cli-server-'));

after(() => rmSync(dir, { recursive: true, force: true }));

describe('trellis server', () => {
  test('--grpc-port -1 as the README writes it runs without the gRPC server; --log-format text logs text', async () => {
    mkdirSync(join(dir, 'dags'));
    const server = spawnTrellis(dir, ['server', '--port', '0', '--grpc-port', '-1', '--data-dir', join(dir, 'data'), '--dags-dir', join(dir, 'dags'), '--log-format', 'text', '--log-level', 'info']);
    try {
      await waitFor('the server to serve', () => /Trellis is serving \S+/.test(server.out()), 180_000);
      const apiUrl = /Trellis is serving (\S+)/.exec(server.out())?.[1] ?? '';
      assert.equal((await fetch(`${apiUrl}/health`)).status, 200);
      const workers = await fetch(`${apiUrl}/workers`);
      assert.equal(workers.status, 503);
      assert.match(((await workers.json()) as { message: string }).message, /gRPC server is not running/);
      assert.match(server.out(), /^\S+Z info coordinator listening \{/m);
    } finally {
      server.child.kill('SIGTERM');
    }
    const done = await server.finished;
    assert.equal(done.code, 0, done.err);
  });
});
