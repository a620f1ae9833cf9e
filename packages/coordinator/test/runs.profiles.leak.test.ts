// The leak test of runtime-profile secrets, on PGlite or PostgreSQL: a secret whose value is a
// unique marker is used by a local run and by a run on a worker process (echoed, written to an
// output, inside failing commands); afterwards the marker is in no API answer, log line of
// either process, database row, or file under either process's directories.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Db } from '@trellis/store';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';
import { startWorkerProcess, type WorkerProcess } from './support/worker-process.js';
import { captureLog } from './support/log-capture.js';

type Json = Record<string, unknown>;
const MARKER = `leakmarker${randomBytes(10).toString('hex')}`;
/** The forms a leaked value could take: as is, hex (a bytea column's text), base64. */
const FORMS = [MARKER, Buffer.from(MARKER).toString('hex'), Buffer.from(MARKER).toString('base64')];

const steps = `steps:
  - name: echo
    command: sh -c 'echo "token is $TOKEN"; echo "to stderr $TOKEN" >&2; printf "%s" "$TOKEN" | rev; echo'
  - name: out
    command: sh -c 'echo "$TOKEN"'
    output: OUT
  - name: fails
    command: sh -c 'echo "failing with $TOKEN" >&2; exit 3'
    continue_on:
      failure: true
  - name: missing
    command: \${TOKEN}_no_such_command
    continue_on:
      failure: true
  - name: sub
    call: leak-child
    params: "COPY=\${TOKEN}"
`;
const DAGS = {
  'leak-local': steps,
  'leak-remote': `worker_selector:\n  pool: leak\n${steps}`,
  'leak-child': 'params:\n  - COPY: ""\nsteps:\n  - name: copy\n    command: sh -c \'echo "copy is $COPY"\'\n',
};

const log = captureLog('debug');
const home = mkdtempSync(join(tmpdir(), 'trellis-leak-'));
let t: TestCoordinator;
let worker: WorkerProcess;
let embedded: Db | undefined;
const answers: string[] = [];
const runs: Array<[string, string]> = [];

async function get(path: string): Promise<Json> {
  const res = await t.call('GET', path);
  assert.equal(res.status, 200, `${path}: ${JSON.stringify(res.json)}`);
  answers.push(`${path} ${JSON.stringify(res.json)}`);
  return res.json;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((f) => join(dir, f)).filter((f) => statSync(f, { throwIfNoEntry: false })?.isFile() === true);
}

function leaks(text: string): boolean {
  return FORMS.some((form) => text.includes(form));
}

before(async () => {
  // On PGlite the database files lie under this test's directory too, so they are searched.
  if (process.env.TRELLIS_TEST_DATABASE_URL === undefined || process.env.TRELLIS_TEST_DATABASE_URL === '') embedded = await openDatabase({ dataDir: join(home, 'pglite') });
  t = await startTestCoordinator('runs_profiles_leak', DAGS, { secretsKey: randomBytes(32).toString('base64') }, { logger: log.logger, ...(embedded !== undefined ? { db: embedded } : {}) });
  assert.ok(t.coordinator.grpcAddress);
  worker = startWorkerProcess(t.coordinator.grpcAddress, 'leak-worker', 'pool=leak', home, 2, 'debug');
  for (const [method, path, body] of [
    ['POST', '/profiles', { name: 'leaky' }],
    ['PUT', '/profiles/leaky/secrets/TOKEN', { value: MARKER }],
  ] as const) {
    const res = await t.call(method, path, body);
    assert.ok(res.status < 300, JSON.stringify(res.json));
    answers.push(JSON.stringify(res.json));
  }
});
after(async () => {
  await worker.stop();
  await t.stop();
  await embedded?.close();
  rmSync(home, { recursive: true, force: true });
});

describe('a profile secret leaks nowhere', () => {
  test('local and worker runs use it: steps see it, every view shows it masked', async () => {
    for (const name of ['leak-local', 'leak-remote']) {
      const res = await t.call('POST', `/dags/${name}/start`, { profileName: 'leaky' });
      assert.equal(res.status, 200, JSON.stringify(res.json));
      answers.push(JSON.stringify(res.json));
      const dagRunId = String(res.json.dagRunId);
      runs.push([name, dagRunId]);
      const run = await t.waitForRunStatus(name, dagRunId, [2, 3, 4, 6], 60_000);
      assert.ok([2, 6].includes(run.status as number), `${name}: the failing steps fail it: ${JSON.stringify(run)}`);
      const echoed = String((await get(`/dag-runs/${name}/${dagRunId}/steps/echo/log`)).content);
      assert.ok(echoed.includes([...MARKER].reverse().join('')), `${name}: the step saw the secret: ${echoed}`);
      assert.match(echoed, /token is \*{7}/);
      assert.match(String((await get(`/dag-runs/${name}/${dagRunId}/steps/echo/log?stream=stderr`)).content), /to stderr \*{7}/);
      assert.match(String((await get(`/dag-runs/${name}/${dagRunId}/steps/fails/log?stream=stderr`)).content), /failing with \*{7}/);
      assert.deepEqual((await get(`/dag-runs/${name}/${dagRunId}/outputs`)).outputs, { out: '*******' });
      const details = (await get(`/dag-runs/${name}/${dagRunId}`)).dagRun as Json;
      assert.deepEqual(details.profileEntries, [{ key: 'TOKEN', kind: 'secret', layer: 'profile' }]);
      const missing = (details.nodes as Json[]).find((n) => (n.step as Json).name === 'missing');
      assert.ok(String(missing?.error) !== '', `${name}: the missing command failed with an error`);
      for (const step of ['out', 'fails', 'missing']) {
        await get(`/dag-runs/${name}/${dagRunId}/steps/${step}/log`);
        await get(`/dag-runs/${name}/${dagRunId}/steps/${step}/log?stream=stderr`);
      }
      await get(`/dag-runs/${name}/${dagRunId}/log`);
      const sub = (details.nodes as Json[]).find((n) => (n.step as Json).name === 'sub') as { subRuns: Array<{ dagRunId: string }> };
      const childId = sub.subRuns[0]?.dagRunId ?? '';
      await get(`/dag-runs/leak-child/${childId}`);
      assert.match(String((await get(`/dag-runs/leak-child/${childId}/steps/copy/log`)).content), /copy is \*{7}/, `${name}: the sub-run got it through params, masked`);
      await get(`/dags/${name}/dag-runs`);
    }
  });

  test('the marker is in no API answer, log line, event, database row or file', async () => {
    for (const path of ['/dag-runs', '/event-logs?limit=1000', '/profiles', '/profiles/leaky', '/workers', '/dags', '/queues']) await get(path);
    for (const answer of answers) assert.ok(!leaks(answer), `API answer: ${answer.slice(0, 300)}`);
    assert.ok(log.lines().length > 0 && !leaks(log.text()), 'coordinator log lines');
    // The worker's attempt folders are emptied once reported: wait until it is idle, then stop it, so it wrote all it will.
    await worker.stop();
    assert.ok(worker.output().length > 0 && !leaks(worker.output()), `worker log lines: ${worker.output().slice(0, 500)}`);
    const tables = await t.coordinator.db.query<{ table_name: string }>(`SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`);
    assert.ok(tables.length > 10);
    for (const { table_name } of tables) {
      const rows = await t.coordinator.db.query<{ row: string }>(`SELECT x::text AS row FROM "${table_name}" x`);
      assert.ok(!leaks(rows.map((r) => r.row).join('\n')), `table ${table_name}`);
    }
    const files = [...filesUnder(t.dir), ...filesUnder(home)];
    assert.ok(files.some((f) => f.endsWith('.out')), 'the runs wrote log files');
    for (const file of files) assert.ok(!leaks(readFileSync(file).toString('latin1')), `file ${file}`);
  });
});
