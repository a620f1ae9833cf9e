import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeStatus, RunStatus } from '@trellis/core';
import { cleanupRuns, nodeOf, readLog, runYaml, startYaml } from './support/run-yaml.js';

after(cleanupRuns);

const handlers = `
handler_on:
  init: {command: echo init >> ../trace}
  success: {command: echo success >> ../trace}
  failure: {command: echo failure >> ../trace}
  abort: {command: echo abort >> ../trace}
  exit: {command: echo exit >> ../trace}
`;

function trace(logDir: string): string[] {
  return readLog(`${logDir}/trace`).trim().split('\n');
}

describe('handler_on', () => {
  test('init, steps, success, exit last', async () => {
    const result = await runYaml(`${handlers}steps:\n  - echo step >> ../trace\n`);
    assert.equal(result.status, RunStatus.Success);
    assert.deepEqual(trace(result.logDir), ['init', 'step', 'success', 'exit']);
    assert.equal(result.snapshot.handlers.exit?.status, NodeStatus.Success);
  });

  test('failure handler on failure; success handler also on partial success', async () => {
    const failed = await runYaml(`${handlers}steps:\n  - exit 1\n`);
    assert.deepEqual(trace(failed.logDir), ['init', 'failure', 'exit']);
    const partial = await runYaml(`${handlers}steps:\n  - {name: a, command: exit 1, continue_on: {failure: true}}\n  - {name: b, command: echo ok}\n`);
    assert.equal(partial.status, RunStatus.PartialSuccess);
    assert.deepEqual(trace(partial.logDir), ['init', 'success', 'exit']);
  });

  test('abort handler runs when stopped, even though the run is stopping', async () => {
    const run = startYaml(`${handlers}steps:\n  - sleep 30\n`);
    await run.reporter.waitFor((s) => s.nodes[0]?.status === NodeStatus.Running);
    run.handle.stop();
    const result = await run.result;
    assert.equal(result.status, RunStatus.Aborted);
    assert.deepEqual(trace(run.logDir), ['init', 'abort', 'exit']);
  });

  test('a failing init handler cancels every step, fails the run and runs the failure handler', async () => {
    const result = await runYaml(`handler_on:\n  init: {command: exit 1}\n  failure: {command: echo failure >> ../trace}\n  exit: {command: echo exit >> ../trace}\nsteps:\n  - echo never\n`);
    assert.equal(result.status, RunStatus.Failed);
    assert.equal(result.snapshot.nodes[0]?.status, NodeStatus.Cancelled);
    assert.deepEqual(trace(result.logDir), ['failure', 'exit']);
  });

  test('the run is reported running until its handlers end; the last report has each one terminal', async () => {
    const result = await runYaml(`handler_on:\n  success: {command: echo on success}\n  exit: {command: echo on exit}\nsteps:\n  - echo step\n`);
    assert.equal(result.status, RunStatus.Success);
    const snapshots = result.reporter.snapshots;
    const last = snapshots.at(-1);
    // A host takes the first terminal status for the end of the run: it must come with everything done.
    assert.equal(snapshots.findIndex((s) => s.status !== RunStatus.Running), snapshots.length - 1);
    assert.equal(last?.status, RunStatus.Success);
    assert.notEqual(last?.finishedAt, '');
    assert.deepEqual(Object.keys(last?.handlers ?? {}), ['success', 'exit']);
    for (const [kind, node] of Object.entries(last?.handlers ?? {})) {
      assert.equal(node.status, NodeStatus.Success, kind);
      assert.notEqual(node.finishedAt, '', kind);
      assert.equal(readLog(node.stdout), `on ${kind}\n`);
    }
    const failed = await runYaml(`handler_on:\n  failure: {command: echo on failure}\n  exit: {command: echo on exit}\nsteps:\n  - exit 4\n`);
    assert.equal(failed.reporter.snapshots.findIndex((s) => s.status !== RunStatus.Running), failed.reporter.snapshots.length - 1);
    assert.deepEqual(Object.values(failed.snapshot.handlers).map((n) => n.status), [NodeStatus.Success, NodeStatus.Success]);
  });

  test('a secret that cannot be resolved fails the run before any step, and the failure and exit handlers run', async () => {
    const result = await runYaml(
      `secrets:\n  - {name: TOKEN, provider: env, key: TRELLIS_TEST_UNSET_SECRET}\nhandler_on:\n  failure: {command: echo failure >> ../trace}\n  success: {command: echo success >> ../trace}\n  exit: {command: echo exit >> ../trace}\nsteps:\n  - echo step >> ../trace\n`,
      { hostEnv: { PATH: process.env.PATH ?? '/usr/bin:/bin' } },
    );
    assert.equal(result.status, RunStatus.Failed);
    assert.match(result.snapshot.error, /secret TOKEN/);
    assert.deepEqual(trace(result.logDir), ['failure', 'exit']);
    assert.equal(result.snapshot.nodes[0]?.status, NodeStatus.NotStarted);
    assert.equal(result.snapshot.handlers.failure?.status, NodeStatus.Success);
  });

  test('a step named .. writes its logs inside the run log directory', async () => {
    const result = await runYaml('steps:\n  - {name: "..", command: echo dots}\n');
    const node = nodeOf(result, '..');
    assert.ok(node.stdout.startsWith(`${result.logDir}/`), node.stdout);
    assert.equal(readLog(node.stdout), 'dots\n');
  });
});

describe('outputs', () => {
  test('output captures trimmed stdout for later steps (env and ${NAME}), with JSON paths', async () => {
    const result = await runYaml(`
steps:
  - {name: produce, command: 'echo "  {\\"user\\": {\\"name\\": \\"ada\\", \\"ids\\": [4, 5]}}  "', output: INFO}
  - {name: consume, command: 'echo "\${INFO.user.name} \${INFO.user.ids[1]}"; echo "$INFO" | head -c 9'}
`);
    assert.equal(result.status, RunStatus.Success);
    assert.equal(readLog(nodeOf(result, 'consume').stdout), 'ada 5\n{"user": ');
  });

  test('the outputs map: camelCase keys, output.key, output.omit, with metadata', async () => {
    const result = await runYaml(`
params: [REGION=eu]
steps:
  - {name: a, command: echo 42, output: RESULT_VALUE}
  - {name: b, command: echo kept, output: {name: OTHER, key: custom_key}}
  - {name: c, command: echo hidden, output: {name: SECRETISH, omit: true}}
`);
    assert.deepEqual(result.outputs.outputs, { resultValue: '42', custom_key: 'kept' });
    assert.equal(result.outputs.metadata.status, 'succeeded');
    assert.equal(result.outputs.metadata.dagRunId, 'run-1');
    assert.equal(result.outputs.metadata.attemptId, 'attempt-1');
    assert.equal(result.outputs.metadata.params, JSON.stringify([{ name: 'REGION', value: 'eu' }]));
    assert.ok(result.outputs.metadata.completedAt !== '');
  });

  test('max_output_size truncates the captured output and says so', async () => {
    const result = await runYaml('max_output_size: 10\nsteps:\n  - {name: big, command: "printf 0123456789ABCDEF", output: BIG}\n');
    assert.equal(result.outputs.outputs.big, '0123456789');
    assert.match(readLog(result.snapshot.log), /output of step "big" truncated at 10 bytes/);
    assert.equal(readLog(nodeOf(result, 'big').stdout), '0123456789ABCDEF', 'the log keeps everything');
  });
});
