import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeStatus, RunStatus } from '@trellis/core';
import { cleanupRuns, nodeOf, readLog, runYaml } from './support/run-yaml.js';

after(cleanupRuns);

/** [start, end] in ms of each node, from the reported timestamps. */
function spans(result: Awaited<ReturnType<typeof runYaml>>): Map<string, [number, number]> {
  return new Map(result.snapshot.nodes.map((n) => [n.step.name, [Date.parse(n.startedAt), Date.parse(n.finishedAt)]]));
}

describe('ordering', () => {
  test('chain: steps run one after another, in order', async () => {
    const result = await runYaml('steps:\n  - name: a\n    command: echo a >> order.txt\n  - name: b\n    command: echo b >> order.txt\n  - name: c\n    command: cat order.txt && echo c\n');
    assert.equal(result.status, RunStatus.Success);
    assert.equal(readLog(nodeOf(result, 'c').stdout), 'a\nb\nc\n');
    const s = spans(result);
    assert.ok((s.get('a')?.[1] ?? 0) <= (s.get('b')?.[0] ?? 0));
  });

  test('graph: depends orders steps; independent steps overlap with max_active_steps', async () => {
    const result = await runYaml(`
type: graph
max_active_steps: 3
steps:
  - {name: a, command: sleep 0.4}
  - {name: b, command: sleep 0.4}
  - {name: c, command: sleep 0.4}
  - {name: join, command: echo done, depends: [a, b, c]}
`);
    assert.equal(result.status, RunStatus.Success);
    const s = spans(result);
    const [aStart, aEnd] = s.get('a') ?? [0, 0];
    const [bStart] = s.get('b') ?? [0, 0];
    const [cStart] = s.get('c') ?? [0, 0];
    assert.ok(bStart < aEnd && cStart < aEnd, 'a, b and c ran at the same time');
    const [joinStart] = s.get('join') ?? [0, 0];
    for (const name of ['a', 'b', 'c']) assert.ok(joinStart >= (s.get(name)?.[1] ?? Infinity), `join waited for ${name}`);
    assert.ok(aStart > 0);
  });

  test('max_active_steps (default 1) never lets more steps run at once', async () => {
    const result = await runYaml(`
type: graph
steps:
  - {name: a, command: sleep 0.2}
  - {name: b, command: sleep 0.2}
  - {name: c, command: sleep 0.2}
`);
    const s = [...spans(result).values()].sort((x, y) => x[0] - y[0]);
    for (let i = 1; i < s.length; i += 1) assert.ok((s[i]?.[0] ?? 0) >= (s[i - 1]?.[1] ?? Infinity), 'no overlap with the default of 1');
  });

  test('delay_sec waits before the first step', async () => {
    const result = await runYaml('delay_sec: 1\nsteps:\n  - echo x\n');
    const started = Date.parse(result.snapshot.startedAt);
    const first = Date.parse(result.snapshot.nodes[0]?.startedAt ?? '');
    assert.ok(first - started >= 950, `first step started ${first - started} ms after the run`);
  });

  test('DAG preconditions not met: the run is Aborted and no step runs', async () => {
    const result = await runYaml('preconditions:\n  - condition: "`echo monday`"\n    expected: sunday\nsteps:\n  - echo never > ran.txt\n');
    assert.equal(result.status, RunStatus.Aborted);
    assert.match(result.snapshot.error, /precondition not met/);
    assert.equal(result.snapshot.nodes[0]?.status, NodeStatus.NotStarted);
  });
});
