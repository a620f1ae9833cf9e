import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { NodeStatus, RunStatus } from '@trellis/core';
import { cleanupRuns, nodeOf, readLog, runYaml, startYaml, tempDir } from './support/run-yaml.js';
import { redisCli, sparePort, startCluster, startSentinel, startTlsServer, type RedisProcesses } from './support/redis-servers.js';
import { selfSignedCert } from './support/tls-cert.js';

/** The machine's own Redis; keys carry a per-run prefix and are deleted afterwards. */
const STANDALONE = 'redis: {host: 127.0.0.1, port: 6379, db: 9}';
const ns = `trellis-test-${randomUUID()}`;

let cluster: RedisProcesses;
let sentinel: RedisProcesses;
let tlsServer: RedisProcesses;

before(async () => {
  const dir = tempDir('trellis-redis-');
  const tlsDir = tempDir('trellis-redis-tls-');
  [cluster, sentinel, tlsServer] = await Promise.all([startCluster(dir), startSentinel(tempDir('trellis-sentinel-'), 'primary'), startTlsServer(tlsDir, selfSignedCert(tlsDir))]);
});

after(async () => {
  await redisCli(6379, '-n', '9', 'EVAL', "for _, k in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('DEL', k) end", '0', `${ns}*`);
  await Promise.all([cluster.stop(), sentinel.stop(), tlsServer.stop()]);
  cleanupRuns();
});

const stdoutOf = (result: Awaited<ReturnType<typeof runYaml>>, step: string): string => readLog(nodeOf(result, step).stdout);

describe('redis standalone (the machine\'s server on 6379)', () => {
  test('commands run in turn with the DAG-level defaults; replies are the output', async () => {
    const result = await runYaml(`
${STANDALONE}
params: [GREETING=hello world]
steps:
  - name: write
    type: redis
    command:
      - SET ${ns}:greeting "\${GREETING}"
      - GET ${ns}:greeting
      - INCR ${ns}:counter
      - INCRBY ${ns}:counter 41
    output: REPLIES
  - name: read
    type: redis
    command: GET ${ns}:counter
    output: COUNT
`);
    assert.equal(result.status, RunStatus.Success, nodeOf(result, 'write').error);
    assert.equal(result.outputs.outputs.replies, 'OK\nhello world\n1\n42');
    assert.equal(result.outputs.outputs.count, '42');
    assert.equal(await redisCli(6379, '-n', '9', 'GET', `${ns}:greeting`), 'hello world');
  });

  test('a pipeline and a transaction send lists of commands; step config overrides the DAG defaults', async () => {
    const result = await runYaml(`
redis: {host: 127.0.0.1, port: 6379, db: 3}
steps:
  - name: pipe
    type: redis
    config:
      db: 9
      pipeline:
        - [RPUSH, ${ns}:list, a, "b c"]
        - LRANGE ${ns}:list 0 -1
        - HSET ${ns}:hash field 7
  - name: tx
    type: redis
    config: {db: 9, transaction: true, pipeline: [INCR ${ns}:tx, INCR ${ns}:tx]}
`);
    assert.equal(result.status, RunStatus.Success, nodeOf(result, 'pipe').error);
    assert.equal(stdoutOf(result, 'pipe'), '2\n["a","b c"]\n1\n');
    assert.equal(stdoutOf(result, 'tx'), '1\n2\n');
    assert.equal(await redisCli(6379, '-n', '9', 'HGET', `${ns}:hash`, 'field'), '7');
  });

  test('an error reply, a dead server and a bad command line fail the step with the reason', async () => {
    const result = await runYaml(`
${STANDALONE}
type: graph
steps:
  - {name: wrong, type: redis, command: [SET ${ns}:k v, HGET ${ns}:k f]}
  - {name: dead, type: redis, command: PING, config: {port: ${await sparePort()}}}
  - {name: pipe, type: redis, config: {pipeline: [SET ${ns}:p 1, LPUSH ${ns}:p x]}}
`);
    assert.equal(result.status, RunStatus.Failed);
    assert.match(nodeOf(result, 'wrong').error, /^WRONGTYPE /);
    assert.equal(stdoutOf(result, 'wrong'), 'OK\n');
    assert.match(nodeOf(result, 'dead').error, /ECONNREFUSED/);
    assert.match(nodeOf(result, 'pipe').error, /^command 2 \(LPUSH\): WRONGTYPE /);
    assert.match(stdoutOf(result, 'pipe'), /^OK\n\(error\) WRONGTYPE/);
  });

  test('stop and a step timeout end a blocked command at once', async () => {
    const run = startYaml(`${STANDALONE}\nsteps:\n  - {name: wait, type: redis, command: BLPOP ${ns}:never 0}\n`);
    await run.reporter.waitFor((s) => s.nodes[0]?.status === NodeStatus.Running);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const stoppedAt = Date.now();
    run.handle.stop();
    const stopped = await run.result;
    assert.equal(stopped.status, RunStatus.Aborted);
    assert.ok(Date.now() - stoppedAt < 2000);
    const timed = await runYaml(`${STANDALONE}\nsteps:\n  - {name: wait, type: redis, timeout_sec: 1, command: BLPOP ${ns}:never 0}\n`);
    assert.equal(timed.status, RunStatus.Failed);
    assert.equal(nodeOf(timed, 'wait').status, NodeStatus.Failed);
  });
});

describe('redis cluster and sentinel (servers started by the test)', () => {
  test('cluster mode follows keys to the node that owns their slot', async () => {
    const [first] = cluster.ports;
    const keys = ['alpha', 'bravo', 'charlie', 'delta', 'echo'];
    const result = await runYaml(`
redis: {mode: cluster, cluster_addrs: ["127.0.0.1:${first}"]}
steps:
  - name: write
    type: redis
    command: [${keys.map((k) => `"SET ${k} v-${k}"`).join(', ')}]
  - name: read
    type: redis
    command: [${keys.map((k) => `"GET ${k}"`).join(', ')}]
    output: VALUES
`);
    assert.equal(result.status, RunStatus.Success, nodeOf(result, 'write').error);
    assert.equal(result.outputs.outputs.values, keys.map((k) => `v-${k}`).join('\n'));
    const owners = new Set(await Promise.all(keys.map((k) => redisCli(first ?? 0, 'CLUSTER', 'KEYSLOT', k).then(Number)))).size;
    assert.ok(owners > 1, 'the keys spread over several slots');
    assert.match(readLog(nodeOf(result, 'write').stderr), new RegExp(`^redis: cluster 127\\.0\\.0\\.1:${first}\\n`));
  });

  test('sentinel mode asks the sentinel for the master', async () => {
    const [masterPort, sentinelPort] = sentinel.ports;
    const result = await runYaml(`
steps:
  - name: via-sentinel
    type: redis
    config: {mode: sentinel, sentinel_master: primary, sentinel_addrs: ["127.0.0.1:${sentinelPort}"]}
    command: [SET watched yes, GET watched]
`);
    assert.equal(result.status, RunStatus.Success, nodeOf(result, 'via-sentinel').error);
    assert.equal(stdoutOf(result, 'via-sentinel'), 'OK\nyes\n');
    assert.equal(await redisCli(masterPort ?? 0, 'GET', 'watched'), 'yes');
  });
});

describe('redis over TLS (a TLS-only server with a self-signed certificate, started by the test)', () => {
  test('tls: true talks TLS; the certificate is checked unless tls_skip_verify; plain text gets no answer', async () => {
    const [port] = tlsServer.ports;
    const result = await runYaml(`
redis: {host: 127.0.0.1, port: ${port}, tls: true, timeout: 5}
type: graph
steps:
  - {name: skip-verify, type: redis, config: {tls_skip_verify: true}, command: [SET secured yes, GET secured]}
  - {name: verified, type: redis, command: PING}
  - {name: plain, type: redis, config: {tls: false}, command: PING}
`);
    assert.equal(nodeOf(result, 'skip-verify').status, NodeStatus.Success, nodeOf(result, 'skip-verify').error);
    assert.equal(stdoutOf(result, 'skip-verify'), 'OK\nyes\n');
    assert.equal(await redisCli(port ?? 0, '--tls', '--insecure', 'GET', 'secured'), 'yes');
    assert.equal(nodeOf(result, 'verified').status, NodeStatus.Failed);
    assert.match(nodeOf(result, 'verified').error, /self[- ]signed certificate/i);
    assert.equal(nodeOf(result, 'plain').status, NodeStatus.Failed);
    assert.equal(stdoutOf(result, 'plain'), '');
  });
});
