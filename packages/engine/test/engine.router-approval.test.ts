import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeStatus, RunStatus } from '@trellis/core';
import { ApprovalError } from '@trellis/engine';
import { cleanupRuns, nodeOf, readLog, runYaml, startYaml } from './support/run-yaml.js';

after(cleanupRuns);

const routed = (mode: string): string => `
type: graph
env: [MODE=${mode}]
steps:
  - name: decide
    type: router
    value: \${MODE}
    routes:
      full: [full]
      're:^inc': [incremental]
  - {name: full, command: echo full, depends: decide}
  - {name: incremental, command: echo incremental, depends: decide}
  - {name: after-full, command: echo after, depends: full}
`;

describe('router', () => {
  test('only the chosen branch runs; the others are skipped', async () => {
    const result = await runYaml(routed('incremental'));
    assert.equal(result.status, RunStatus.Success);
    assert.equal(nodeOf(result, 'incremental').status, NodeStatus.Success);
    assert.equal(nodeOf(result, 'full').status, NodeStatus.Skipped);
    assert.equal(nodeOf(result, 'after-full').status, NodeStatus.Skipped);
    const exact = await runYaml(routed('full'));
    assert.equal(nodeOf(exact, 'full').status, NodeStatus.Success);
    assert.equal(nodeOf(exact, 'incremental').status, NodeStatus.Skipped);
  });
});

const gated = `
handler_on:
  wait: {command: echo waiting >> ../wait.txt}
steps:
  - name: gate
    command: echo ready
    approval:
      prompt: Deploy?
      input: [TICKET, NOTE]
      required: [TICKET]
  - name: deploy
    command: echo "deploying $TICKET"
`;

describe('approval', () => {
  test('the step runs, the run waits (7) and the wait handler runs; approving resumes with the inputs', async () => {
    const run = startYaml(gated);
    const waiting = await run.reporter.waitFor((s) => s.status === RunStatus.Waiting);
    assert.deepEqual(waiting.waitingSteps, ['gate']);
    assert.equal(readLog(waiting.nodes[0]?.stdout ?? ''), 'ready\n');
    assert.equal(waiting.nodes[1]?.status, NodeStatus.NotStarted);
    await run.reporter.waitFor((s) => s.handlers.wait?.status === NodeStatus.Success);
    assert.equal(readLog(`${run.logDir}/wait.txt`), 'waiting\n');
    assert.throws(() => run.handle.approve('gate', { NOTE: 'no ticket' }), (e: unknown) => e instanceof ApprovalError && /TICKET/.test(e.message));
    assert.throws(() => run.handle.approve('deploy', {}), ApprovalError);
    run.handle.approve('gate', { TICKET: 'OPS-42' });
    const result = await run.result;
    assert.equal(result.status, RunStatus.Success);
    assert.equal(readLog(nodeOf(result, 'deploy').stdout), 'deploying OPS-42\n');
  });

  test('rejecting ends the run Rejected (8)', async () => {
    const run = startYaml(gated);
    await run.reporter.waitFor((s) => s.status === RunStatus.Waiting);
    run.handle.reject('gate', 'not today');
    const result = await run.result;
    assert.equal(result.status, RunStatus.Rejected);
    assert.equal(nodeOf(result, 'deploy').status, NodeStatus.Cancelled);
    assert.equal(result.outputs.metadata.status, 'rejected');
  });

  test('stopping a waiting run aborts it', async () => {
    const run = startYaml(gated);
    await run.reporter.waitFor((s) => s.status === RunStatus.Waiting);
    run.handle.stop();
    assert.equal((await run.result).status, RunStatus.Aborted);
  });
});
