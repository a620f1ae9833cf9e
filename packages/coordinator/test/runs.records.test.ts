// What a run record says about work that ran, on the local executor and on a real worker process
// (`trellis worker`, built: run `npm run build` first): lifecycle handlers, logs under a DAG's
// log_dir, dotenv files, and the params of `parallel` sub-runs.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';
import { startWorkerProcess, type WorkerProcess } from './support/worker-process.js';

type Json = Record<string, unknown>;

interface HandlerNode {
  step: { name: string };
  status: number;
  finishedAt: string;
  stdout: string;
}

const ON_WORKER = 'worker_selector:\n  pool: records\n';
const HANDLED = 'handler_on:\n  success: {command: echo "success ran"}\n  failure: {command: echo "failure ran"}\n  exit: {command: echo "exit ran"}\n';
const SECRET = 'secrets:\n  - {name: TOKEN, provider: env, key: TRELLIS_RECORDS_TEST_UNSET}\n';
const FAN = 'steps:\n  - name: fan\n    call: greet-item\n    parallel:\n      items: [a, b]\n    params: "WHO=${ITEM}"\n---\nname: greet-item\nparams: WHO=nobody\nsteps:\n  - {name: hi, command: echo "hi $WHO"}\n';

const placements = [
  { where: 'the local executor', prefix: 'local', header: '' },
  { where: 'a worker', prefix: 'remote', header: ON_WORKER },
] as const;

let t: TestCoordinator;
let worker: WorkerProcess | undefined;
let absoluteLogDir = '';
let workingDir = '';

function dags(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { prefix, header } of placements) {
    out[`${prefix}-handled`] = `${header}${HANDLED}steps:\n  - echo step\n`;
    out[`${prefix}-secret`] = `${header}${SECRET}${HANDLED}steps:\n  - echo never\n`;
    out[`${prefix}-logdir-relative`] = `${header}log_dir: team-logs\n${HANDLED}steps:\n  - {name: s, command: echo "in log_dir"}\n`;
    out[`${prefix}-logdir-absolute`] = `${header}log_dir: ${absoluteLogDir}\nsteps:\n  - {name: s, command: echo "in absolute log_dir"}\n`;
    out[`${prefix}-fan`] = `${header}${FAN}`;
    out[`${prefix}-dotenv`] = `${header}steps:\n  - {name: s, command: 'echo "$FROM_DOTENV|$WITH_COMMENT"'}\n`;
    out[`${prefix}-dotenv-working-dir`] = `${header}working_dir: ${workingDir}\ndotenv: [extra.env]\nsteps:\n  - {name: s, command: 'echo "$FROM_WORKING_DIR"'}\n`;
  }
  return out;
}

async function run(name: string, id: string): Promise<Json | undefined> {
  return (await t.call('GET', `/dag-runs/${name}/${id}`)).json.dagRun as Json | undefined;
}

async function ended(name: string, id: string): Promise<Json> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const r = await run(name, id);
    if (r !== undefined && [2, 3, 4, 6, 8].includes(r.status as number)) return r;
    if (Date.now() > deadline) throw new Error(`${name}/${id} never ended: ${JSON.stringify(r)}\nworker output:\n${worker?.output() ?? ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function startAndEnd(name: string, id: string): Promise<Json> {
  const res = await t.call('POST', `/dags/${name}/start`, { dagRunId: id });
  assert.equal(res.status, 200, JSON.stringify(res.json));
  return ended(name, id);
}

async function stepLog(name: string, id: string, step: string): Promise<{ status: number; content: string }> {
  const res = await t.call('GET', `/dag-runs/${name}/${id}/steps/${step}/log`);
  return { status: res.status, content: String(res.json.content ?? res.json.message) };
}

before(async () => {
  // The folders the DAG files name must be known before the files are written.
  const base = join(process.env.TMPDIR ?? '/tmp', `trellis-records-${process.pid}`);
  absoluteLogDir = join(base, 'absolute-logs');
  workingDir = join(base, 'working');
  mkdirSync(workingDir, { recursive: true });
  writeFileSync(join(workingDir, 'extra.env'), 'FROM_WORKING_DIR=read from the working directory\n');
  t = await startTestCoordinator('runs_records', dags());
  writeFileSync(join(t.dir, 'dags', '.env'), 'FROM_DOTENV="beside the DAG file"\nWITH_COMMENT=value # a comment\n');
  assert.ok(t.coordinator.grpcAddress);
  worker = startWorkerProcess(t.coordinator.grpcAddress, 'worker-records', 'pool=records', t.dir);
});

after(async () => {
  await worker?.stop();
  await t.stop();
  rmSync(join(absoluteLogDir, '..'), { recursive: true, force: true });
});

for (const { where, prefix } of placements) {
  describe(`run records on ${where}`, () => {
    test('every handler that ran ends terminal in the record and its log is read by its handler name', async () => {
      const name = `${prefix}-handled`;
      const record = await startAndEnd(name, 'h-1');
      assert.equal(record.status, 4, String(record.error));
      const handlers = record.handlers as Record<string, HandlerNode>;
      assert.deepEqual(Object.keys(handlers).sort(), ['exit', 'success']);
      for (const [kind, node] of Object.entries(handlers)) {
        assert.equal(node.status, 4, `${kind} handler status`);
        assert.notEqual(node.finishedAt, '', `${kind} handler finish time`);
      }
      assert.deepEqual(await stepLog(name, 'h-1', 'onSuccess'), { status: 200, content: 'success ran' });
      assert.deepEqual(await stepLog(name, 'h-1', 'onExit'), { status: 200, content: 'exit ran' });
      assert.equal((await stepLog(name, 'h-1', 'onFailure')).status, 404, 'a handler that did not run has no log');
    });

    test('a secret that cannot be resolved fails the run before any step; the failure and exit handlers run and are recorded', async () => {
      const name = `${prefix}-secret`;
      const record = await startAndEnd(name, 's-1');
      assert.equal(record.status, 2);
      assert.match(String(record.error), /secret TOKEN/);
      assert.equal((record.nodes as Array<{ status: number }>)[0]?.status, 0, 'no step ran');
      const handlers = record.handlers as Record<string, HandlerNode>;
      assert.deepEqual(Object.keys(handlers).sort(), ['exit', 'failure']);
      assert.deepEqual(Object.values(handlers).map((h) => h.status), [4, 4]);
      assert.deepEqual(await stepLog(name, 's-1', 'onFailure'), { status: 200, content: 'failure ran' });
    });

    // The paths name the logs; their bytes are in the database, where the endpoints read them.
    test('a relative log_dir lies under the system log directory and names the run and step logs, which the endpoints read', async () => {
      const name = `${prefix}-logdir-relative`;
      const record = await startAndEnd(name, 'l-1');
      assert.equal(record.status, 4, String(record.error));
      const root = join(t.dir, 'data', 'logs', 'team-logs', name);
      assert.ok(String(record.log).startsWith(`${root}/`), `run log ${String(record.log)} under ${root}`);
      const node = (record.nodes as Array<{ stdout: string }>)[0];
      assert.ok(node?.stdout.startsWith(`${root}/`), `step log ${node?.stdout} under ${root}`);
      assert.deepEqual(await stepLog(name, 'l-1', 's'), { status: 200, content: 'in log_dir' });
      assert.deepEqual(await stepLog(name, 'l-1', 'onExit'), { status: 200, content: 'exit ran' });
      assert.match(String((await t.call('GET', `/dag-runs/${name}/l-1/log`)).json.content), /run finished: succeeded/);
    });

    test('an absolute log_dir holds the logs', async () => {
      const name = `${prefix}-logdir-absolute`;
      const record = await startAndEnd(name, 'a-1');
      assert.equal(record.status, 4, String(record.error));
      assert.ok(String(record.log).startsWith(`${join(absoluteLogDir, name)}/`), String(record.log));
      assert.deepEqual(await stepLog(name, 'a-1', 's'), { status: 200, content: 'in absolute log_dir' });
    });

    test('parallel sub-runs record the params their item gave them', async () => {
      const name = `${prefix}-fan`;
      const record = await startAndEnd(name, 'f-1');
      assert.equal(record.status, 4, String(record.error));
      const subRuns = (record.nodes as Array<{ subRuns: Array<{ dagRunId: string; params: string }> }>)[0]?.subRuns ?? [];
      assert.deepEqual(subRuns.map((s) => s.params), ['WHO=a', 'WHO=b']);
      for (const [i, sub] of subRuns.entries()) {
        const child = await ended('greet-item', sub.dagRunId);
        assert.deepEqual(JSON.parse(String(child.params)), [{ name: 'WHO', value: ['a', 'b'][i] }]);
        assert.equal((await stepLog('greet-item', sub.dagRunId, 'hi')).content, `hi ${['a', 'b'][i]}`);
      }
    });

    test('the default .env beside the stored DAG file is loaded, parsed as dotenv does', async () => {
      const name = `${prefix}-dotenv`;
      const record = await startAndEnd(name, 'e-1');
      assert.equal(record.status, 4, String(record.error));
      assert.equal((await stepLog(name, 'e-1', 's')).content, 'beside the DAG file|value');
    });

    test('a relative dotenv file is read from the working directory', async () => {
      const name = `${prefix}-dotenv-working-dir`;
      const record = await startAndEnd(name, 'd-1');
      assert.equal(record.status, 4, String(record.error));
      assert.equal((await stepLog(name, 'd-1', 's')).content, 'read from the working directory');
    });
  });
}
