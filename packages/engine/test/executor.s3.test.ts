import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { DeleteObjectsCommand, HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { NodeStatus, RunStatus } from '@trellis/core';
import { cleanupRuns, nodeOf, readLog, runYaml, startYaml, tempDir } from './support/run-yaml.js';
import { startS3rver, type S3rverProcess } from './support/s3rver-process.js';

let server: S3rverProcess;
let endpoint = '';
let work = '';

before(async () => {
  server = await startS3rver(tempDir('trellis-s3rver-'), 'data');
  endpoint = server.endpoint;
  work = tempDir('trellis-s3-work-');
  mkdirSync(join(work, 'site/css'), { recursive: true });
  writeFileSync(join(work, 'report.csv'), 'id,total\n1,42\n');
  writeFileSync(join(work, 'site/index.html'), '<h1>hi</h1>');
  writeFileSync(join(work, 'site/css/main.css'), 'h1{}');
});

after(async () => {
  await server.stop();
  cleanupRuns();
});

/** A DAG whose s3 steps reach the test's server; credentials come from secrets as a user would pass them. */
const dag = (steps: string): string => `
type: graph
working_dir: ${work}
secrets:
  - {name: AWS_ACCESS_KEY_ID, provider: env, key: TEST_S3_KEY}
  - {name: AWS_SECRET_ACCESS_KEY, provider: env, key: TEST_S3_SECRET}
steps:
${steps}`;
const at = (): string => `endpoint: ${endpoint}, force_path_style: true, bucket: data`;

describe('s3 steps against an S3-protocol server (s3rver)', () => {
  before(() => {
    process.env.TEST_S3_KEY = 'S3RVER';
    process.env.TEST_S3_SECRET = 'S3RVER';
  });

  test('upload, list, download and delete round trip', async () => {
    const up = await runYaml(dag(`
  - {name: one, type: s3, command: upload, config: {${at()}, source: report.csv, key: reports/report.csv, content_type: text/csv, storage_class: STANDARD}}
  - {name: tree, type: s3, command: upload, config: {${at()}, source: site, prefix: www/, recursive: true}}
`));
    assert.equal(up.status, RunStatus.Success, up.snapshot.nodes.map((n) => n.error).join('; '));
    assert.equal(readLog(nodeOf(up, 'tree').stdout), 'uploaded site/css/main.css to s3://data/www/css/main.css (4 bytes)\nuploaded site/index.html to s3://data/www/index.html (11 bytes)\n');
    const client = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
    assert.equal((await client.send(new HeadObjectCommand({ Bucket: 'data', Key: 'reports/report.csv' }))).ContentType, 'text/csv');
    client.destroy();

    const listed = await runYaml(dag(`
  - {name: top, type: s3, command: list, output: TOP, config: {${at()}}}
  - {name: all, type: s3, command: list, output: ALL, config: {${at()}, prefix: www/, recursive: true}}
  - {name: first, type: s3, command: list, config: {${at()}, prefix: www/, recursive: true, max_keys: 2}}
`));
    assert.equal(listed.status, RunStatus.Success, listed.snapshot.nodes.map((n) => n.error).join('; '));
    const top = JSON.parse(listed.outputs.outputs.top ?? '') as { objects: unknown[]; prefixes: string[] };
    assert.deepEqual([top.objects, top.prefixes], [[], ['reports/', 'www/']]);
    const all = JSON.parse(listed.outputs.outputs.all ?? '') as { objects: Array<{ key: string; size: number }> };
    assert.deepEqual(all.objects.map((o) => [o.key, o.size]), [['www/css/main.css', 4], ['www/index.html', 11]]);
    assert.equal((JSON.parse(readLog(nodeOf(listed, 'first').stdout)) as { objects: unknown[] }).objects.length, 2);

    const down = await runYaml(dag(`
  - {name: file, type: s3, command: download, config: {${at()}, key: reports/report.csv, destination: copy.csv}}
  - {name: into-dir, type: s3, command: download, config: {${at()}, key: reports/report.csv, destination: inbox/}}
  - {name: tree, type: s3, command: download, config: {${at()}, prefix: www/, recursive: true, destination: mirror}}
`));
    assert.equal(down.status, RunStatus.Success, down.snapshot.nodes.map((n) => n.error).join('; '));
    assert.equal(readFileSync(join(work, 'copy.csv'), 'utf8'), 'id,total\n1,42\n');
    assert.equal(readFileSync(join(work, 'inbox/report.csv'), 'utf8'), 'id,total\n1,42\n');
    assert.equal(readFileSync(join(work, 'mirror/css/main.css'), 'utf8'), 'h1{}');
    assert.equal(readFileSync(join(work, 'mirror/index.html'), 'utf8'), '<h1>hi</h1>');

    const gone = await runYaml(dag(`
  - {name: one, type: s3, command: delete, config: {${at()}, key: reports/report.csv}}
  - {name: tree, type: s3, command: delete, config: {${at()}, prefix: www/, recursive: true}}
  - {name: after, type: s3, command: list, output: LEFT, depends: [one, tree], config: {${at()}, recursive: true}}
`));
    assert.equal(gone.status, RunStatus.Success, gone.snapshot.nodes.map((n) => n.error).join('; '));
    assert.equal(readLog(nodeOf(gone, 'tree').stdout), 'deleted s3://data/www/css/main.css\ndeleted s3://data/www/index.html\n');
    assert.deepEqual((JSON.parse(gone.outputs.outputs.left ?? '') as { objects: unknown[] }).objects, []);
  });

  test('list pages through continuation tokens: every object without max_keys, exactly max_keys with it; recursive delete of them all', async () => {
    // More objects than one page (1000) holds; put straight through the SDK, a few at a time.
    const keys = Array.from({ length: 1003 }, (_, i) => `many/${String(i).padStart(4, '0')}.txt`);
    const client = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
    try {
      for (let at = 0; at < keys.length; at += 16) await Promise.all(keys.slice(at, at + 16).map((Key) => client.send(new PutObjectCommand({ Bucket: 'data', Key, Body: 'x' }))));
      const listed = await runYaml(dag(`
  - {name: all, type: s3, command: list, config: {${at()}, prefix: many/, recursive: true}}
  - {name: past-a-page, type: s3, command: list, config: {${at()}, prefix: many/, recursive: true, max_keys: 1001}}
  - {name: three, type: s3, command: list, config: {${at()}, prefix: many/, recursive: true, max_keys: 3}}
`));
      assert.equal(listed.status, RunStatus.Success, listed.snapshot.nodes.map((n) => n.error).join('; '));
      const keysOf = (step: string): string[] => (JSON.parse(readLog(nodeOf(listed, step).stdout)) as { objects: Array<{ key: string }> }).objects.map((o) => o.key);
      assert.deepEqual(keysOf('all'), keys);
      assert.deepEqual(keysOf('past-a-page'), keys.slice(0, 1001));
      assert.deepEqual(keysOf('three'), keys.slice(0, 3));

      const gone = await runYaml(dag(`  - {name: tree, type: s3, command: delete, config: {${at()}, prefix: many/, recursive: true}}
  - {name: left, type: s3, command: list, depends: tree, output: LEFT, config: {${at()}, prefix: many/, recursive: true}}
`));
      assert.equal(gone.status, RunStatus.Success, gone.snapshot.nodes.map((n) => n.error).join('; '));
      assert.equal(readLog(nodeOf(gone, 'tree').stdout).split('\n').filter(Boolean).length, keys.length);
      assert.deepEqual((JSON.parse(gone.outputs.outputs.left ?? '') as { objects: unknown[] }).objects, []);
    } finally {
      // Whatever a failed assertion left behind does not reach the other tests' listings.
      for (let at = 0; at < keys.length; at += 1000) await client.send(new DeleteObjectsCommand({ Bucket: 'data', Delete: { Objects: keys.slice(at, at + 1000).map((Key) => ({ Key })) } })).catch(() => undefined);
      client.destroy();
    }
  });

  test('a missing object, a missing bucket and wrong credentials fail the step with the reason; no secret reaches the log', async () => {
    const result = await runYaml(dag(`
  - {name: missing, type: s3, command: download, config: {${at()}, key: nope.txt, destination: nope.txt}}
  - {name: no-bucket, type: s3, command: list, config: {endpoint: ${endpoint}, force_path_style: true, bucket: absent}}
  - {name: bad-key, type: s3, command: list, config: {${at()}, access_key_id: "\${AWS_SECRET_ACCESS_KEY}-unknown", secret_access_key: x}}
`));
    assert.equal(result.status, RunStatus.Failed);
    assert.match(nodeOf(result, 'missing').error, /^download failed: .*(NoSuchKey|does not exist)/i);
    assert.match(nodeOf(result, 'no-bucket').error, /^list failed: .*bucket does not exist/i);
    assert.match(nodeOf(result, 'bad-key').error, /^list failed: .*Access Key Id you provided does not exist/);
    for (const node of result.snapshot.nodes) assert.doesNotMatch(readLog(node.stderr) + node.error, /S3RVER/);
  });

  test('a store that never answers: the step ends at its timeout_sec, and at once on stop', async () => {
    const silent: Server = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const hung = `endpoint: http://127.0.0.1:${(silent.address() as AddressInfo).port}, force_path_style: true, bucket: data`;
    try {
      const started = Date.now();
      const timed = await runYaml(dag(`  - {name: ls, type: s3, command: list, timeout_sec: 1, config: {${hung}}}\n`));
      assert.equal(nodeOf(timed, 'ls').status, NodeStatus.Failed);
      assert.ok(Date.now() - started < 5000);
      const run = startYaml(dag(`  - {name: ls, type: s3, command: list, config: {${hung}}}\n`));
      await run.reporter.waitFor((snap) => snap.nodes[0]?.status === NodeStatus.Running);
      await new Promise((resolve) => setTimeout(resolve, 200));
      const stoppedAt = Date.now();
      run.handle.stop();
      assert.equal((await run.result).status, RunStatus.Aborted);
      assert.ok(Date.now() - stoppedAt < 2000);
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
