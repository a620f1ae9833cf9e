import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadWorkerConfig, parseLabels, WorkerConfigError } from '@trellis/worker';

describe('worker configuration', () => {
  test('labels k=v,k2=v2 become a map; malformed pairs are reported', () => {
    const problems: string[] = [];
    assert.deepEqual(parseLabels('gpu=true, region=eu-west,empty=', problems), { gpu: 'true', region: 'eu-west', empty: '' });
    assert.deepEqual(problems, []);
    parseLabels('novalue,=x,ok=1', problems);
    assert.equal(problems.length, 2);
    assert.match(problems[0] ?? '', /"novalue" must look like key=value/);
  });

  test('flags win over SVC_WORKER_* variables; defaults fill the rest', () => {
    const config = loadWorkerConfig({ coordinator: 'coord:50051', labels: 'a=1' }, { SVC_WORKER_COORDINATOR: 'ignored:1', SVC_WORKER_POLLERS: '3', SVC_WORKER_TOKEN: 't0k' });
    assert.deepEqual(config.coordinators, ['coord:50051']);
    assert.equal(config.pollers, 3);
    assert.equal(config.token, 't0k');
    assert.deepEqual(config.labels, { a: '1' });
    assert.equal(config.shutdownGraceSec, 60);
    assert.match(config.id, /-\d+$/);
  });

  test('several coordinators, comma-separated, are kept in order; a bad or repeated address is reported', () => {
    const config = loadWorkerConfig({}, { SVC_WORKER_COORDINATOR: 'a.example:50051, b.example:50052' });
    assert.deepEqual(config.coordinators, ['a.example:50051', 'b.example:50052']);
    assert.throws(
      () => loadWorkerConfig({ coordinator: 'a:1,b,a:1' }, {}),
      (error: unknown) => {
        assert.ok(error instanceof WorkerConfigError);
        assert.deepEqual(error.problems, ['--coordinator must be HOST:PORT (several separated by commas), got "b"', '--coordinator lists an address twice: "a:1,b,a:1"']);
        return true;
      },
    );
  });

  test('every problem is listed at once', () => {
    assert.throws(
      () => loadWorkerConfig({ labels: 'bad', pollers: '0', id: 'has space', tlsCert: 'c.pem', logLevel: 'loud' }, {}),
      (error: unknown) => {
        assert.ok(error instanceof WorkerConfigError);
        assert.deepEqual(
          error.problems.map((p) => p.split(' ')[0]),
          ['--coordinator', '--id', 'label', '--tls-cert', '--pollers', '--log-level'],
        );
        return true;
      },
    );
  });
});
