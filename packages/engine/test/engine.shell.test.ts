import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NodeStatus, RunStatus } from '@trellis/core';
import { cleanupRuns, nodeOf, readLog, runYaml, startYaml, tempDir } from './support/run-yaml.js';

after(cleanupRuns);

describe('shell steps', () => {
  test('command as a string, an array (stops at the first failure) and a multi-line script', async () => {
    const result = await runYaml(`
type: graph
steps:
  - {name: single, command: echo one}
  - name: sequence
    command: [echo first, "false", echo never]
  - name: multi
    command: |
      x=41
      echo $((x + 1))
`);
    assert.equal(readLog(nodeOf(result, 'single').stdout), 'one\n');
    assert.equal(nodeOf(result, 'sequence').status, NodeStatus.Failed);
    assert.equal(readLog(nodeOf(result, 'sequence').stdout), 'first\n');
    assert.equal(readLog(nodeOf(result, 'multi').stdout), '42\n');
  });

  test('script with the shell, and with a command as its interpreter', async () => {
    const result = await runYaml(`
steps:
  - name: sh-script
    script: |
      echo "from script $1"
  - name: python
    command: python3
    script: |
      print(6 * 7)
`, { paramsJson: '["p1"]' });
    assert.equal(result.status, RunStatus.Success);
    assert.equal(readLog(nodeOf(result, 'sh-script').stdout), 'from script p1\n');
    assert.equal(readLog(nodeOf(result, 'python').stdout), '42\n');
  });

  test('shell at DAG and step level', async () => {
    const result = await runYaml(`
shell: bash
steps:
  - name: bashism
    command: 'arr=(a b c); echo \${#arr[@]}'
  - name: py
    shell: [python3, -c]
    command: print('py')
`);
    assert.equal(readLog(nodeOf(result, 'bashism').stdout), '3\n');
    assert.equal(readLog(nodeOf(result, 'py').stdout), 'py\n');
  });

  test('working_dir: the per-run work directory by default, else the given one', async () => {
    const dir = tempDir();
    const result = await runYaml(`
steps:
  - {name: default, command: 'pwd; echo $DAG_RUN_WORK_DIR'}
  - {name: given, command: pwd, working_dir: ${dir}}
`);
    const [pwd, workDir] = readLog(nodeOf(result, 'default').stdout).trim().split('\n');
    assert.equal(pwd, workDir);
    assert.equal(pwd, join(result.logDir, 'work'));
    assert.equal(readLog(nodeOf(result, 'given').stdout).trim(), dir);
  });

  test('env: DAG then step (step wins), values expanded', async () => {
    const result = await runYaml(`
env:
  - BASE=dag
  - WHO=dag
  - DERIVED=\${BASE}-x
steps:
  - name: s
    env: [WHO=step]
    command: echo $BASE $WHO $DERIVED
`);
    assert.equal(readLog(nodeOf(result, 's').stdout), 'dag step dag-x\n');
  });

  test('dotenv files load before the DAG env', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'vars.env'), '# comment\nexport FROM_FILE="file value"\nOVERRIDDEN=file\n');
    const result = await runYaml(`dotenv: vars.env\nenv: [OVERRIDDEN=dag]\nsteps:\n  - echo "$FROM_FILE $OVERRIDDEN"\n`, { baseDir: dir });
    assert.equal(readLog(result.snapshot.nodes[0]?.stdout ?? '').trim(), 'file value dag');
  });

  test('stdout/stderr files, separate and merged logs, and the run log', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'out'));
    const result = await runYaml(`
type: graph
steps:
  - name: separate
    command: echo out; echo err >&2
    stdout: ${dir}/out/copy.txt
  - name: merged
    log_output: merged
    command: echo out; echo err >&2
`);
    const separate = nodeOf(result, 'separate');
    assert.equal(readLog(separate.stdout), 'out\n');
    assert.equal(readLog(separate.stderr), 'err\n');
    assert.equal(readLog(join(dir, 'out', 'copy.txt')), 'out\n');
    const merged = nodeOf(result, 'merged');
    assert.equal(merged.stdout, merged.stderr);
    assert.deepEqual(readLog(merged.stdout).split('\n').filter(Boolean).sort(), ['err', 'out']);
    const runLog = readLog(result.snapshot.log);
    assert.match(runLog, /step "separate" started/);
    assert.match(runLog, /run finished: succeeded/);
    assert.equal(result.reporter.text('separate/stdout'), 'out\n');
  });

  test('a stdout file that cannot be opened fails the step with the reason, and the run goes on', async () => {
    const dir = tempDir();
    const result = await runYaml(`
type: graph
steps:
  - name: copied
    command: echo out
    stdout: ${dir}/missing/copy.txt
  - {name: other, command: echo fine}
`);
    const copied = nodeOf(result, 'copied');
    assert.equal(copied.status, NodeStatus.Failed);
    assert.match(copied.error ?? '', /cannot open .*missing\/copy\.txt: ENOENT/);
    assert.equal(nodeOf(result, 'other').status, NodeStatus.Success);
  });

  test('without log streaming, plain steps write straight to their files; captured steps still work', async () => {
    const result = await runYaml(
      `
type: graph
steps:
  - {name: direct, command: 'echo out; echo err >&2'}
  - {name: direct-merged, log_output: merged, command: 'echo out; echo err >&2'}
  - {name: captured, command: echo value, output: VALUE}
`,
      { streamLogs: false },
    );
    assert.equal(result.status, RunStatus.Success);
    assert.equal(readLog(nodeOf(result, 'direct').stdout), 'out\n');
    assert.equal(readLog(nodeOf(result, 'direct').stderr), 'err\n');
    assert.deepEqual(readLog(nodeOf(result, 'direct-merged').stdout).split('\n').filter(Boolean).sort(), ['err', 'out']);
    assert.equal(result.outputs.outputs.value, 'value');
    assert.equal(result.reporter.text('direct/stdout'), '', 'nothing streamed when the host reads the files');
  });

  test('streamed, a plain step still writes straight to its files: chunks come from reading them, live, at their offsets, once', async () => {
    const run = startYaml(
      `
steps:
  - name: ticker
    command: 'echo first; echo oops >&2; sleep 1.5; echo second; exit 3'
    retry_policy: {limit: 1, interval_sec: 0}
`,
    );
    while (run.reporter.text('ticker/stdout') === '') await new Promise((r) => setTimeout(r, 50));
    assert.equal(run.reporter.last?.nodes[0]?.status, NodeStatus.Running, 'the first line arrived while the step still ran');
    assert.equal(run.reporter.text('ticker/stdout'), 'first\n');
    const result = await run.result;
    assert.equal(result.status, RunStatus.Failed);
    const node = nodeOf(result, 'ticker');
    assert.equal(node.retryCount, 1);
    // Both executions appended to the same file; every byte was reported once, in order.
    assert.equal(readLog(node.stdout), 'first\nsecond\nfirst\nsecond\n');
    assert.equal(run.reporter.text('ticker/stdout'), readLog(node.stdout));
    assert.equal(run.reporter.text('ticker/stderr'), 'oops\noops\n');
    let expected = 0;
    for (const chunk of run.reporter.chunks.filter((c) => c.stream === 'ticker/stdout')) {
      assert.equal(chunk.offset, expected, 'chunks are contiguous');
      expected += chunk.data.length;
    }
  });

  test('a captured step retried appends to its file, and its chunks carry the real offsets', async () => {
    const result = await runYaml('steps:\n  - name: cap\n    command: echo attempt; exit 1\n    output: OUT\n    retry_policy: {limit: 1, interval_sec: 0}\n');
    assert.equal(result.status, RunStatus.Failed);
    const chunks = result.reporter.chunks.filter((c) => c.stream === 'cap/stdout');
    assert.deepEqual(chunks.map((c) => [c.offset, c.data.toString()]), [[0, 'attempt\n'], [8, 'attempt\n']]);
    assert.equal(readLog(nodeOf(result, 'cap').stdout), 'attempt\nattempt\n');
  });

  test('a command that cannot start fails with its message', async () => {
    const result = await runYaml('steps:\n  - name: x\n    command: /nonexistent/binary\n');
    assert.equal(result.status, RunStatus.Failed);
    assert.equal(nodeOf(result, 'x').status, NodeStatus.Failed);
    assert.match(nodeOf(result, 'x').error, /exit status 127/);
  });
});
