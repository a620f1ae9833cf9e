import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { NodeStatus, RunStatus } from '@trellis/core';
import { MASK, readDotenvFiles } from '@trellis/engine';
import { cleanupRuns, nodeOf, readLog, runYaml, tempDir } from './support/run-yaml.js';

after(cleanupRuns);

const hostEnv = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: '/home/tester',
  LANG: 'C.UTF-8',
  DAG_FROM_HOST: 'dag-prefixed',
  SVC_SETTING: 'svc-prefixed',
  KUBERNETES_SERVICE_HOST: 'k8s',
  LC_TIME: 'C',
  AWS_SECRET_ACCESS_KEY: 'must-not-leak',
  DATABASE_PASSWORD: 'must-not-leak-either',
  PASSED_THROUGH: 'explicit',
  TEAM_TOKEN: 'prefix-pass',
  PROD_DB_PASSWORD: 'hunter2-super-secret',
};

describe('environment', () => {
  test('only the allowlist, the prefixes and passthrough settings reach a step', async () => {
    const result = await runYaml('steps:\n  - {name: env, command: env | sort}\n', { hostEnv, envPassthrough: ['PASSED_THROUGH'], envPassthroughPrefixes: ['TEAM_'] });
    const seen = Object.fromEntries(
      readLog(nodeOf(result, 'env').stdout)
        .trim()
        .split('\n')
        .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
    );
    for (const key of ['HOME', 'LANG', 'DAG_FROM_HOST', 'SVC_SETTING', 'KUBERNETES_SERVICE_HOST', 'LC_TIME', 'PASSED_THROUGH', 'TEAM_TOKEN']) assert.equal(seen[key], hostEnv[key as keyof typeof hostEnv], key);
    assert.equal(seen.AWS_SECRET_ACCESS_KEY, undefined);
    assert.equal(seen.DATABASE_PASSWORD, undefined);
  });

  test('special variables are set', async () => {
    const docs = tempDir();
    const result = await runYaml('name: special\nsteps:\n  - name: show\n    command: \'printf "%s\\n" "$DAG_NAME" "$DAG_RUN_ID" "$DAG_RUN_LOG_FILE" "$DAG_RUN_STEP_NAME" "$DAG_RUN_STEP_STDOUT_FILE" "$DAG_RUN_STEP_STDERR_FILE" "$DAG_RUN_WORK_DIR" "$DAG_DOCS_DIR"\'\n', { hostEnv, docsDir: docs });
    const node = nodeOf(result, 'show');
    assert.deepEqual(readLog(node.stdout).trim().split('\n'), ['special', 'run-1', result.snapshot.log, 'show', node.stdout, node.stderr, join(result.logDir, 'work'), join(docs, 'special')]);
  });

  test('DAG_DOCS_DIR is unset when no docs directory is configured', async () => {
    const result = await runYaml('steps:\n  - {name: s, command: \'echo "[${DAG_DOCS_DIR-unset}]"\'}\n', { hostEnv: { ...hostEnv, DAG_DOCS_DIR: '/from/host' } });
    assert.equal(readLog(nodeOf(result, 's').stdout), '[unset]\n');
  });

  test('params become env vars; positional params are $1, $2', async () => {
    const result = await runYaml('params: "first NAME=default"\nsteps:\n  - {name: s, command: echo "$1 $NAME"}\n', { hostEnv, paramsJson: JSON.stringify(['one', 'NAME=given']) });
    assert.equal(readLog(nodeOf(result, 's').stdout), 'one given\n');
  });
});

describe('dotenv', () => {
  const show = 'steps:\n  - {name: s, command: \'printf "%s|" "$A" "$B" "$C" "$D"\'}\n';

  test('the default .env is read from the DAG file folder, parsed as dotenv does', async () => {
    const dagDir = tempDir();
    writeFileSync(join(dagDir, '.env'), 'A=1 # note\nB="line\\nnext"\nC="multi\nline"\nexport D=\'kept # hash\'\n');
    const result = await runYaml(show, { hostEnv, baseDir: dagDir });
    assert.equal(readLog(nodeOf(result, 's').stdout), '1|line\nnext|multi\nline|kept # hash|');
  });

  test('a relative file missing from the DAG file folder is read from the working directory', async () => {
    const dagDir = tempDir();
    const workingDir = tempDir();
    writeFileSync(join(dagDir, 'first.env'), 'A=from-dag-folder\n');
    writeFileSync(join(workingDir, 'first.env'), 'A=from-working-dir\n');
    writeFileSync(join(workingDir, 'second.env'), 'B=from-working-dir\n');
    const result = await runYaml(`working_dir: ${workingDir}\ndotenv: [first.env, second.env]\n${show}`, { hostEnv, baseDir: dagDir });
    assert.equal(readLog(nodeOf(result, 's').stdout), 'from-dag-folder|from-working-dir|||');
  });

  test('files the host read beside the DAG file come first; the others from the working directory', async () => {
    const workingDir = tempDir();
    writeFileSync(join(workingDir, '.env'), 'A=from-working-dir\n');
    writeFileSync(join(workingDir, 'more.env'), 'B=from-working-dir\n');
    const result = await runYaml(`working_dir: ${workingDir}\ndotenv: [.env, more.env]\n${show}`, { hostEnv, dotenvFiles: { '.env': 'A="sent by the host" # note\n' } });
    assert.equal(readLog(nodeOf(result, 's').stdout), 'sent by the host|from-working-dir|||');
  });

  test('without a DAG file folder, relative files come from the working directory', async () => {
    const workingDir = tempDir();
    writeFileSync(join(workingDir, '.env'), 'C=here\n');
    const result = await runYaml(`working_dir: ${workingDir}\n${show}`, { hostEnv });
    assert.equal(readLog(nodeOf(result, 's').stdout), '||here||');
  });

  test('a relative path may not climb out of the DAG folder or the working directory', async () => {
    const parent = tempDir();
    const dagDir = join(parent, 'dags');
    mkdirSync(dagDir);
    writeFileSync(join(parent, '.env'), 'A=the-coordinators-own-token\n');
    const result = await runYaml(`dotenv: ../.env\n${show}`, { hostEnv, baseDir: dagDir });
    assert.equal(result.snapshot.status, RunStatus.Failed);
    assert.match(result.snapshot.error ?? '', /dotenv \.\.\/\.env: a relative path must stay inside/);
    assert.equal(nodeOf(result, 's').status, NodeStatus.NotStarted);
    assert.deepEqual(await readDotenvFiles(['../.env', '.env'], dagDir), {});
  });

  test('an entry that is not a regular file fails the run instead of being read', async () => {
    const result = await runYaml(`dotenv: /dev/zero\n${show}`, { hostEnv });
    assert.equal(result.snapshot.status, RunStatus.Failed);
    assert.match(result.snapshot.error ?? '', /dotenv \/dev\/zero: not a regular file/);
  });
});

describe('secrets', () => {
  test('env and file secrets reach the step and are masked in logs, outputs and status', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'token.txt'), 'file-token-abc123\n');
    const result = await runYaml(
      `
secrets:
  - {name: DB_PASSWORD, provider: env, key: PROD_DB_PASSWORD}
  - {name: API_TOKEN, provider: file, key: token.txt}
steps:
  - name: use
    command: 'echo "db=$DB_PASSWORD token=$API_TOKEN"; echo "err $DB_PASSWORD" >&2; [ "$API_TOKEN" = file-token-abc123 ]'
    output: LEAK
`,
      { hostEnv, baseDir: dir, secrets: { PROFILE_SECRET: 'profile-secret-xyz' } },
    );
    assert.equal(result.status, RunStatus.Success);
    const node = nodeOf(result, 'use');
    assert.equal(readLog(node.stdout), `db=${MASK} token=${MASK}\n`);
    assert.equal(readLog(node.stderr), `err ${MASK}\n`);
    assert.equal(result.outputs.outputs.leak, `db=${MASK} token=${MASK}`);
    const everything = JSON.stringify(result.reporter.snapshots) + result.reporter.text('use/stdout') + JSON.stringify(result.outputs);
    assert.doesNotMatch(everything, /hunter2-super-secret|file-token-abc123/);
  });

  test('the run log masks secrets that reach its messages', async () => {
    // The router logs the value it matched: here a secret, expanded.
    const result = await runYaml(
      `
type: graph
secrets:
  - {name: DB_PASSWORD, provider: env, key: PROD_DB_PASSWORD}
steps:
  - name: pick
    type: router
    value: \${DB_PASSWORD}
    routes:
      "re:.*": [after]
  - {name: after, command: "true"}
`,
      { hostEnv },
    );
    assert.equal(result.status, RunStatus.Success);
    const runLog = readLog(result.snapshot.log);
    assert.ok(runLog.includes(`router "pick": value "${MASK}" -> after`), runLog);
    assert.doesNotMatch(runLog + result.reporter.text('run'), /hunter2-super-secret/);
  });

  test('a missing secret fails the run before any step runs', async () => {
    const result = await runYaml('secrets:\n  - {name: S, provider: env, key: NOT_SET_ANYWHERE}\nsteps:\n  - echo never\n', { hostEnv });
    assert.equal(result.status, RunStatus.Failed);
    assert.match(result.snapshot.error, /secret S: environment variable NOT_SET_ANYWHERE is not set/);
  });
});

describe('limits and paths', () => {
  test('a chain of env values that each double the last fails the run, naming the limit', async () => {
    const env = Array.from({ length: 40 }, (_, i) => `  - V${i + 1}: "\${V${i}}\${V${i}}"`).join('\n');
    const result = await runYaml(`env:\n  - V0: "${'x'.repeat(1024)}"\n${env}\nsteps:\n  - name: s1\n    command: "true"\n`, { hostEnv });
    assert.equal(result.status, RunStatus.Failed);
    assert.match(result.snapshot.error, /MAX_EXPANDED_VALUE_LENGTH/);
  });

  test('a step named ".." writes its logs to files of its own run folder', async () => {
    const result = await runYaml('steps:\n  - name: ..\n    command: echo dots\n  - name: .\n    command: echo dot\n', { hostEnv });
    assert.equal(result.status, RunStatus.Success);
    for (const name of ['..', '.']) {
      const stdout = nodeOf(result, name).stdout;
      assert.equal(dirname(stdout), result.logDir, `${stdout} is not a file of ${result.logDir}`);
    }
    assert.equal(readLog(nodeOf(result, '..').stdout), 'dots\n');
  });
});
