import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeStatus, RunStatus } from '@trellis/core';
import { cleanupRuns, nodeOf, readLog, runYaml } from './support/run-yaml.js';

after(cleanupRuns);

describe('sub-DAG steps', () => {
  test('call runs a child with parent and root ids; its outputs are ${STEP.outputs.key}', async () => {
    const result = await runYaml(`
name: parent
steps:
  - name: child
    call: compute
    params: "X=20"
  - name: use
    command: echo "child said \${child.outputs.answer}"
---
name: compute
params: X=1
steps:
  - {name: calc, command: 'echo $((X + 22))', output: ANSWER}
`);
    assert.equal(result.status, RunStatus.Success);
    const child = nodeOf(result, 'child');
    assert.equal(child.status, NodeStatus.Success);
    assert.equal(child.subRuns.length, 1);
    assert.equal(child.subRuns[0]?.name, 'compute');
    assert.equal(child.subRuns[0]?.params, 'X=20');
    assert.equal(child.subRuns[0]?.status, RunStatus.Success);
    assert.equal(readLog(nodeOf(result, 'use').stdout), 'child said 42\n');
  });

  test('run and type: dag are the same; a failing child fails the step', async () => {
    const result = await runYaml(`
type: graph
steps:
  - {name: via-run, run: ok}
  - {name: via-type, type: dag, command: broken}
---
name: ok
steps: [echo ok]
---
name: broken
steps: [exit 3]
`);
    assert.equal(nodeOf(result, 'via-run').status, NodeStatus.Success);
    assert.equal(nodeOf(result, 'via-type').status, NodeStatus.Failed);
    assert.match(nodeOf(result, 'via-type').error, /did not succeed/);
    assert.equal(result.status, RunStatus.Failed);
  });

  test('parallel: one child per item with ITEM, max_concurrent respected, recorded in subRuns', async () => {
    const result = await runYaml(`
steps:
  - name: fan
    call: worker
    parallel:
      items: [a, b, c, d]
      max_concurrent: 2
  - name: from-var
    call: worker
    parallel: \${LIST}
env:
  - 'LIST=["x", "y"]'
---
name: worker
steps:
  - 'echo "$ITEM $(date +%s%N)" >> ../../../items.txt; sleep 0.3'
`);
    assert.equal(result.status, RunStatus.Success);
    const fan = nodeOf(result, 'fan');
    assert.equal(fan.subRuns.length, 4);
    assert.equal(new Set(fan.subRuns.map((s) => s.dagRunId)).size, 4);
    assert.equal(nodeOf(result, 'from-var').subRuns.length, 2);
    const lines = readLog(`${result.logDir}/items.txt`).trim().split('\n');
    assert.deepEqual(lines.map((l) => l.split(' ')[0]).sort(), ['a', 'b', 'c', 'd', 'x', 'y']);
    // Items a-d in pairs: the third item cannot start before the first pair finished.
    const times = lines.filter((l) => /^[a-d] /.test(l)).map((l) => Number(l.split(' ')[1]) / 1e6).sort((x, y) => x - y);
    assert.ok((times[2] ?? 0) - (times[0] ?? 0) >= 250, 'at most two items ran at once');
  });

  test('parallel: the params of each child have its own ${ITEM} expanded, as recorded and as handed over', async () => {
    const launched: Array<{ params: string; item: string | undefined }> = [];
    const result = await runYaml(
      `
steps:
  - name: fan
    call: worker
    parallel:
      items: [a, {"id": 7}]
    params: "WHO=\${ITEM} ID=\${ITEM.id}"
---
name: worker
params: WHO ID
steps: [echo]
`,
      {
        launchSubRun: (request) => {
          launched.push({ params: request.params, item: request.env.ITEM });
          return { done: Promise.resolve({ status: RunStatus.Success, outputs: {} }), stop: () => undefined };
        },
      },
    );
    assert.equal(result.status, RunStatus.Success);
    assert.deepEqual(launched, [
      { params: 'WHO=a ID=${ITEM.id}', item: 'a' },
      { params: 'WHO={"id":7} ID=7', item: '{"id":7}' },
    ]);
    assert.deepEqual(nodeOf(result, 'fan').subRuns.map((s) => s.params), launched.map((l) => l.params));
  });

  test('parallel: when one item\'s params cannot be expanded, no further child starts, started ones are stopped, the step fails', async () => {
    const launched: string[] = [];
    const stopped: string[] = [];
    const big = 'x'.repeat(600 * 1024);
    const result = await runYaml(
      `
steps:
  - name: fan
    call: worker
    parallel:
      items: [a, ${big}, c, d]
      max_concurrent: 2
    params: "X=\${ITEM}\${ITEM}"
---
name: worker
params: X
steps: [echo]
`,
      {
        launchSubRun: (request) => {
          launched.push(request.params);
          let cancel: () => void = () => undefined;
          const done = new Promise<{ status: RunStatus; outputs: Record<string, string> }>((resolve) => (cancel = () => resolve({ status: RunStatus.Aborted, outputs: {} })));
          return {
            done,
            stop: () => {
              stopped.push(request.params);
              cancel();
            },
          };
        },
      },
    );
    assert.equal(result.status, RunStatus.Failed);
    assert.deepEqual(launched, ['X=aa']);
    assert.deepEqual(stopped, ['X=aa']);
    assert.match(nodeOf(result, 'fan').error, /sub-run 1: .*expan/i);
  });

  test('without a launcher, a sub-DAG step fails with a clear error', async () => {
    const result = await runYaml('steps:\n  - {name: c, call: other}\n', { launchSubRun: undefined });
    assert.match(nodeOf(result, 'c').error, /sub-DAG runs are not available/);
  });
});
