import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeStatus, RunStatus } from '@trellis/core';
import { cleanupRuns, nodeOf, readLog, runYaml } from './support/run-yaml.js';

after(cleanupRuns);

describe('retry_policy', () => {
  test('retries up to the limit; retryCount on the node; success on a later attempt', async () => {
    const result = await runYaml(`
steps:
  - name: flaky
    command: 'n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count; echo attempt $n; [ $n -ge 3 ]'
    retry_policy: {limit: 5, interval_sec: 0}
`);
    const node = nodeOf(result, 'flaky');
    assert.equal(node.status, NodeStatus.Success);
    assert.equal(node.retryCount, 2);
    assert.equal(readLog(node.stdout), 'attempt 1\nattempt 2\nattempt 3\n');
  });

  test('gives up after the limit; only listed exit codes are retried', async () => {
    const result = await runYaml(`
type: graph
steps:
  - {name: always, command: exit 4, retry_policy: {limit: 2}}
  - {name: unlisted, command: exit 4, retry_policy: {limit: 3, exit_code: [5]}}
`);
    assert.equal(nodeOf(result, 'always').retryCount, 2);
    assert.equal(nodeOf(result, 'always').status, NodeStatus.Failed);
    assert.equal(nodeOf(result, 'unlisted').retryCount, 0);
  });

  test('intervals grow by backoff and are capped by max_interval_sec', async () => {
    const started = Date.now();
    const result = await runYaml('steps:\n  - {name: r, command: exit 1, retry_policy: {limit: 3, interval_sec: 0.2, backoff: 2, max_interval_sec: 0.3}}\n');
    const elapsed = Date.now() - started;
    // 0.2 + min(0.4, 0.3) + min(0.8, 0.3) = 0.8 s of waiting, at least.
    assert.ok(elapsed >= 800, `elapsed ${elapsed} ms`);
    assert.equal(nodeOf(result, 'r').retryCount, 3);
  });

  test('a step that timed out is not retried', async () => {
    const result = await runYaml('steps:\n  - {name: slow, command: sleep 5, timeout_sec: 1, retry_policy: {limit: 3}}\n');
    const node = nodeOf(result, 'slow');
    assert.equal(node.status, NodeStatus.Failed);
    assert.equal(node.retryCount, 0);
    assert.match(node.error, /timed out after 1s/);
  });
});

describe('repeat_policy', () => {
  test('until a condition matches: doneCount counts executions', async () => {
    const result = await runYaml(`
steps:
  - name: poll
    command: 'n=$(cat n 2>/dev/null || echo 0); echo $((n+1)) > n'
    repeat_policy: {repeat: until, condition: "\`cat n\`", expected: "3", interval_sec: 0}
`);
    assert.equal(nodeOf(result, 'poll').doneCount, 3);
    assert.equal(result.status, RunStatus.Success);
  });

  test('while an exit code holds, bounded by limit', async () => {
    const result = await runYaml(`
type: graph
steps:
  - name: while-code
    command: 'n=$(cat w 2>/dev/null || echo 0); n=$((n+1)); echo $n > w; [ $n -ge 4 ] && exit 0; exit 1'
    repeat_policy: {repeat: while, exit_code: [1]}
  - name: limited
    command: echo tick
    repeat_policy: {repeat: true, limit: 3}
`);
    assert.equal(nodeOf(result, 'while-code').doneCount, 4);
    assert.equal(nodeOf(result, 'while-code').status, NodeStatus.Success);
    assert.equal(nodeOf(result, 'limited').doneCount, 3);
    assert.equal(readLog(nodeOf(result, 'limited').stdout), 'tick\ntick\ntick\n');
  });

  test('while a command condition succeeds', async () => {
    const result = await runYaml(`
steps:
  - name: w
    command: 'echo x >> lines'
    repeat_policy: {repeat: while, condition: '[ $(wc -l < lines) -lt 2 ]'}
`);
    assert.equal(nodeOf(result, 'w').doneCount, 2);
  });
});
