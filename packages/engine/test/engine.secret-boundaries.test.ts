import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RunStatus } from '@trellis/core';
import { MASK, MemoryReporter } from '@trellis/engine';
import { LogSink } from '../src/logs/log-sink.js';
import { SecretMasker } from '../src/logs/secret-masker.js';
import { cleanupRuns, nodeOf, readLog, runYaml, tempDir } from './support/run-yaml.js';

after(cleanupRuns);

const SECRET = 'tok-3f9c2a7d1e';
const hostEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/home/tester', API_TOKEN_SOURCE: SECRET };

async function sinkWrites(chunks: Array<string | Buffer>): Promise<{ file: string; reported: string }> {
  const path = join(tempDir(), 'out.log');
  const reporter = new MemoryReporter();
  const sink = new LogSink({ path, stream: 's/stdout', reporter, masker: new SecretMasker([SECRET]) });
  for (const chunk of chunks) await new Promise<void>((resolve, reject) => sink.write(chunk, (error) => (error ? reject(error) : resolve())));
  await new Promise<void>((resolve) => sink.end(resolve));
  return { file: readFileSync(path, 'utf8'), reported: Buffer.concat(reporter.chunks.map((c) => c.data)).toString('utf8') };
}

describe('secrets across write boundaries', () => {
  test('a secret straddling the 64 KiB flush point of a long line is masked whole', async () => {
    const long = 'a'.repeat(70_000);
    const { file, reported } = await sinkWrites([`${long}${SECRET.slice(0, 5)}`, `${SECRET.slice(5)} tail\n`]);
    assert.equal(file, `${long}${MASK} tail\n`);
    assert.equal(reported, file);
  });

  test('a secret cut after a newline, and a UTF-8 character cut by a read, come out whole', async () => {
    const euro = Buffer.from('€');
    const { file } = await sinkWrites([`line one\n${SECRET.slice(0, 3)}`, Buffer.concat([Buffer.from(`${SECRET.slice(3)} `), euro.subarray(0, 1)]), Buffer.concat([euro.subarray(1), Buffer.from('\n')])]);
    assert.equal(file, `line one\n${MASK} €\n`);
  });

  test('a step printing a long line with a secret across the flush point (writes 0.3 s apart) writes it masked', async () => {
    const result = await runYaml(
      `secrets:\n  - {name: API_TOKEN, provider: env, key: API_TOKEN_SOURCE}\nsteps:\n  - name: s\n    command: 'head -c 65532 /dev/zero | tr "\\\\0" a; sleep 0.3; printf "%s" "$(printf "%s" "$API_TOKEN" | cut -c1-5)"; sleep 0.3; printf "%s\\\\n" "$(printf "%s" "$API_TOKEN" | cut -c6-)"'\n`,
      { hostEnv },
    );
    assert.equal(result.status, RunStatus.Success, result.snapshot.error);
    const log = readLog(nodeOf(result, 's').stdout);
    assert.equal(log, `${'a'.repeat(65_532)}${MASK}\n`);
    assert.doesNotMatch(result.reporter.text('s/stdout'), new RegExp(SECRET.slice(0, 5)));
  });
});

describe('secrets handed to a sub-DAG', () => {
  test('the parent shows the params masked; the child masks the value in its logs, status and outputs', async () => {
    const result = await runYaml(
      `
name: parent
secrets:
  - {name: API_TOKEN, provider: env, key: API_TOKEN_SOURCE}
steps:
  - name: child
    call: worker
    params: "TOKEN=\${API_TOKEN} PLAIN=visible"
    output: CHILD
---
name: worker
params: "TOKEN=none PLAIN=none"
steps:
  - {name: use, command: 'echo "token=$TOKEN plain=$PLAIN"', output: USED}
`,
      { hostEnv },
    );
    assert.equal(result.status, RunStatus.Success, result.snapshot.error);
    const child = nodeOf(result, 'child');
    assert.equal(child.subRuns[0]?.params, `TOKEN=${MASK} PLAIN=visible`);
    assert.doesNotMatch(JSON.stringify(result.reporter.snapshots), new RegExp(SECRET));
    const childDir = join(result.logDir, 'children', child.subRuns[0]?.dagRunId ?? '');
    assert.equal(readLog(join(childDir, 'use.out')), `token=${MASK} plain=visible\n`);
    for (const file of readdirSync(childDir)) if (file.endsWith('.out') || file.endsWith('.log')) assert.doesNotMatch(readLog(join(childDir, file)), new RegExp(SECRET), file);
    assert.equal(result.outputs.outputs.child, JSON.stringify({ used: `token=${MASK} plain=visible` }));
  });

  test('a secret with a quote and a newline, passed in object params, is masked in the parent and handed to the child to mask', async () => {
    const pem = 'BEGIN "key"\nline-7c1e9a\\end';
    const launched: Array<{ params: string; maskValues: string[] }> = [];
    const result = await runYaml(
      `
secrets:
  - {name: PEM, provider: env, key: PEM_SOURCE}
steps:
  - name: child
    call: worker
    params: {KEY: "\${PEM}", PLAIN: visible}
---
name: worker
steps: [echo]
`,
      {
        hostEnv: { ...hostEnv, PEM_SOURCE: pem },
        launchSubRun: (request) => {
          launched.push({ params: request.params, maskValues: request.maskValues ?? [] });
          return { done: Promise.resolve({ status: RunStatus.Success, outputs: {} }), stop: () => undefined };
        },
      },
    );
    assert.equal(result.status, RunStatus.Success, result.snapshot.error);
    assert.deepEqual(JSON.parse(launched[0]?.params ?? ''), { KEY: pem, PLAIN: 'visible' });
    assert.deepEqual(launched[0]?.maskValues, [pem]);
    assert.deepEqual(JSON.parse(nodeOf(result, 'child').subRuns[0]?.params ?? ''), { KEY: MASK, PLAIN: 'visible' });
    assert.ok(!JSON.stringify(result.reporter.snapshots).includes('line-7c1e9a'));
  });
});
