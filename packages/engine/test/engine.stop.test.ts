import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeStatus, RunStatus } from '@trellis/core';
import { cleanupRuns, nodeOf, readLog, runYaml, startYaml } from './support/run-yaml.js';
import { processesMatching, uniqueSleep } from './support/processes.js';

after(cleanupRuns);

describe('stopping and timeouts', () => {
  test('stop: SIGTERM to the step, the whole process group ends, the run is Aborted', async () => {
    const marker = uniqueSleep();
    const run = startYaml(`
type: graph
steps:
  - name: tree
    command: 'sleep ${marker} & sleep ${marker} & sleep ${marker}'
  - {name: later, command: echo never, depends: tree}
`);
    try {
      await run.reporter.waitFor((s) => s.nodes[0]?.status === NodeStatus.Running);
      // The shell and its three sleeps all carry the marker on their command line.
      for (let i = 0; i < 100 && processesMatching(`sleep ${marker}`).length < 4; i += 1) await new Promise((r) => setTimeout(r, 20));
      assert.ok(processesMatching(`sleep ${marker}`).length >= 3);
    } finally {
      run.handle.stop();
    }
    const result = await run.result;
    assert.equal(result.status, RunStatus.Aborted);
    assert.equal(nodeOf(result, 'tree').status, NodeStatus.Cancelled);
    assert.equal(nodeOf(result, 'later').status, NodeStatus.Cancelled);
    assert.deepEqual(processesMatching(`sleep ${marker}`), [], 'no child process survives the stop');
  });

  test('stop with a reason: the run is Aborted with that reason as its error; without one, no error', async () => {
    const marker = uniqueSleep();
    const withReason = startYaml(`steps:\n  - sleep ${marker}\n`);
    const plain = startYaml(`steps:\n  - sleep ${marker}\n`);
    await withReason.reporter.waitFor((s) => s.nodes[0]?.status === NodeStatus.Running);
    await plain.reporter.waitFor((s) => s.nodes[0]?.status === NodeStatus.Running);
    withReason.handle.stop('the coordinator shut down');
    plain.handle.stop();
    const [reasoned, unreasoned] = await Promise.all([withReason.result, plain.result]);
    assert.equal(reasoned.status, RunStatus.Aborted);
    assert.equal(reasoned.snapshot.error, 'the coordinator shut down');
    assert.equal(unreasoned.status, RunStatus.Aborted);
    assert.equal(unreasoned.snapshot.error, '');
  });

  test('signal_on_stop is sent first; SIGKILL follows after max_clean_up_time_sec', async () => {
    const marker = uniqueSleep();
    const run = startYaml(`
max_clean_up_time_sec: 1
steps:
  - name: stubborn
    signal_on_stop: SIGINT
    command: 'trap "echo got INT" INT; trap "" TERM; sleep ${marker} & while true; do wait; done'
`);
    await run.reporter.waitFor((s) => s.nodes[0]?.status === NodeStatus.Running);
    for (let i = 0; i < 50 && processesMatching(`sleep ${marker}`).length === 0; i += 1) await new Promise((r) => setTimeout(r, 20));
    const stoppedAt = Date.now();
    run.handle.stop();
    const result = await run.result;
    assert.ok(Date.now() - stoppedAt >= 900, 'waited for the clean-up time before SIGKILL');
    assert.match(readLog(nodeOf(result, 'stubborn').stdout), /got INT/);
    assert.deepEqual(processesMatching(`sleep ${marker}`), []);
  });

  test('a finished step leaves no background process behind', async () => {
    const marker = uniqueSleep();
    const result = await runYaml(`steps:\n  - name: bg\n    command: 'sleep ${marker} & echo started'\n`);
    assert.equal(result.status, RunStatus.Success);
    assert.deepEqual(processesMatching(`sleep ${marker}`), []);
  });

  test('step timeout_sec fails the step; DAG timeout_sec fails the run', async () => {
    const step = await runYaml('steps:\n  - {name: s, command: sleep 10, timeout_sec: 1}\n');
    assert.equal(step.status, RunStatus.Failed);
    assert.match(nodeOf(step, 's').error, /timed out/);
    const marker = uniqueSleep();
    const dag = await runYaml(`timeout_sec: 1\nsteps:\n  - {name: s, command: sleep ${marker}}\n  - {name: t, command: echo t}\n`);
    assert.equal(dag.status, RunStatus.Failed);
    assert.match(dag.snapshot.error, /timed out after 1s/);
    assert.equal(nodeOf(dag, 't').status, NodeStatus.Cancelled);
    assert.deepEqual(processesMatching(`sleep ${marker}`), []);
  });

  test('stop during delay_sec aborts before any step', async () => {
    const run = startYaml('delay_sec: 30\nsteps:\n  - echo never\n');
    await run.reporter.waitFor((s) => s.status === RunStatus.Running);
    run.handle.stop();
    const result = await run.result;
    assert.equal(result.status, RunStatus.Aborted);
    assert.equal(result.snapshot.nodes[0]?.status, NodeStatus.Cancelled);
  });
});
