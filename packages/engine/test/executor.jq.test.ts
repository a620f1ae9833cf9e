import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { PassThrough } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { loadDag } from '@trellis/core';
import { jqExecutor } from '../src/executors/jq.js';
import type { StepExecutionContext, StepExecutionResult } from '../src/executors/types.js';

interface Outcome {
  result: StepExecutionResult;
  stdout: string;
  stderr: string;
}

function collector(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

/** Runs one jq step, parsed from YAML as a user would write it. */
/**
 * The step as the executor sees it once `${...}` references are expanded: validation takes a
 * reference on trust, so the executor checks the expanded config again.
 */
async function jq(filter: string, input: string, config: Record<string, unknown> = {}, signal = new AbortController().signal): Promise<Outcome> {
  const loaded = loadDag(JSON.stringify({ steps: [{ name: 'q', type: 'jq', command: filter, script: input }] }));
  const parsed = loaded.dag?.steps[0];
  assert.ok(parsed, loaded.errors.join('; '));
  const step = { ...parsed, config };
  const out = collector();
  const err = collector();
  const ctx: StepExecutionContext = { step, env: {}, workingDir: tmpdir(), shell: ['sh'], stdout: out.stream, stderr: err.stream, signal, stopSignal: 'SIGTERM', killAfterMs: 1000 };
  const result = await jqExecutor.run(ctx);
  return { result, stdout: out.text(), stderr: err.text() };
}

const people = JSON.stringify([
  { name: 'ada', age: 36, tags: ['math'] },
  { name: 'bob', age: 17, tags: [] },
  { name: 'cy', age: 52, tags: ['ops', 'db'] },
]);

describe('jq executor', () => {
  test('field access prints JSON the way the jq CLI does', async () => {
    const { result, stdout } = await jq('.[0] | {name, first: .tags[0]}', people);
    assert.deepEqual(result, { exitCode: 0 });
    assert.equal(stdout, '{\n  "name": "ada",\n  "first": "math"\n}\n');
    assert.equal((await jq('.a.b', '{"a":{"b":"x"}}')).stdout, '"x"\n');
  });

  test('map and select', async () => {
    const { stdout } = await jq('map(select(.age >= 18) | .name)', people);
    assert.equal(stdout, '[\n  "ada",\n  "cy"\n]\n');
  });

  test('multiple results each on their own line, and one run per input document', async () => {
    assert.equal((await jq('.[] | .age', people)).stdout, '36\n17\n52\n');
    assert.equal((await jq('.[]', '[1, "two", {"x": 3}]')).stdout, '1\n"two"\n{\n  "x": 3\n}\n');
    assert.equal((await jq('. * 10', '1 2 3')).stdout, '10\n20\n30\n');
    assert.equal((await jq('.[] | select(. > 5)', '[1, 2]')).stdout, '');
  });

  test('raw output prints strings as they are, whitespace and empty strings included', async () => {
    assert.equal((await jq('.[] | .name', people, { raw: true })).stdout, 'ada\nbob\ncy\n');
    assert.equal((await jq('.[]', '["  padded  ", "", "tab\\tend"]', { raw: 'true' })).stdout, '  padded  \n\ntab\tend\n');
    assert.equal((await jq('.', '{"n": 1}', { raw: true })).stdout, '{\n  "n": 1\n}\n');
  });

  test('an error raised after earlier results still fails the step', async () => {
    const { result, stdout, stderr } = await jq('.[] | if . == 2 then error("two is not allowed") else . end', '[1, 2, 3]');
    assert.equal(result.exitCode, 1);
    assert.match(result.error ?? '', /two is not allowed/);
    assert.match(stderr, /two is not allowed/);
    assert.equal(stdout, '');
  });

  test('an invalid filter fails with jq\'s message about the filter as written', async () => {
    const { result, stderr } = await jq('.items[', people);
    assert.equal(result.exitCode, 1);
    assert.match(result.error ?? '', /^jq: error: syntax error, .* line 1: \.items\[$/);
    assert.match(stderr, /\.items\[/);
    assert.match(stderr, /1 compile error/);
    const unknown = await jq('nosuchfunction(1)', people);
    assert.match(unknown.result.error ?? '', /nosuchfunction\/1 is not defined/);
  });

  test('invalid JSON input fails with jq\'s parse message', async () => {
    const { result } = await jq('.', '{"a": tru}');
    assert.equal(result.exitCode, 1);
    assert.match(result.error ?? '', /^jq: error \(at <stdin>:\d+\): Invalid literal/);
  });

  test('a step without a filter or input, or with a bad config, fails clearly', async () => {
    assert.match((await jq('.', '{}', { raw: 'yes' })).result.error ?? '', /^invalid jq config: raw/);
    const loaded = loadDag(JSON.stringify({ steps: [{ name: 'q', type: 'jq', command: '.', script: '${INPUT}' }] }));
    const parsed = loaded.dag?.steps[0];
    assert.ok(parsed);
    // Validation requires a script; the executor still refuses a step that reaches it without one.
    const step = { ...parsed };
    delete step.script;
    const err = collector();
    const ctx: StepExecutionContext = { step, env: {}, workingDir: tmpdir(), shell: ['sh'], stdout: new PassThrough(), stderr: err.stream, signal: new AbortController().signal, stopSignal: 'SIGTERM', killAfterMs: 1000 };
    assert.deepEqual(await jqExecutor.run(ctx), { exitCode: 1, error: 'jq step needs its JSON input in script' });
  });

  test('stopping ends a long filter, and later steps still run', async () => {
    const controller = new AbortController();
    const running = jq('last(range(1e12))', 'null', {}, controller.signal);
    await delay(200);
    controller.abort({ kind: 'stop' });
    const { result } = await running;
    assert.equal(result.stopped, true);
    assert.equal(result.exitCode, 1);
    const results = await Promise.all([jq('.a', '{"a":1}'), jq('.a', '{"a":2}'), jq('.a', '{"a":3}')]);
    assert.deepEqual(results.map((r) => r.stdout), ['1\n', '2\n', '3\n']);
  });
});
