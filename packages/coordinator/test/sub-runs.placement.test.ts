// Sub-DAG runs across the coordinator and a real worker process: where a child is placed (the
// step's worker_selector), what it is handed (ITEM of a `parallel` item), and how its parent
// waits for it and stops it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';
import { startWorkerProcess, type WorkerProcess } from './support/worker-process.js';

type Json = Record<string, unknown>;

interface ChildRow {
  dagName: string;
  dagRunId: string;
  status: number;
  workerId: string;
  dispatchTarget: string;
  workerSelector: Record<string, string>;
  runEnv: Record<string, string>;
  queueName: string;
  trigger: string;
}

const ITEM_CHILD = 'name: item-child\nsteps:\n  - name: show\n    command: echo "item=$ITEM ref=${ITEM}"\n    output: SHOWN\n';

const DAGS = {
  // A run on the local executor whose sub-DAG step names worker labels.
  'local-parent':
    'steps:\n  - name: child\n    call: pooled\n    worker_selector:\n      pool: x\n  - name: after\n    command: echo "child said ${child.outputs.where}"\n    output: AFTER\n',
  pooled: 'steps:\n  - name: where\n    command: echo "on $DAG_RUN_WORK_DIR"\n    output: WHERE\n',
  'local-slow-parent': 'steps:\n  - name: child\n    call: sleepy\n    worker_selector:\n      pool: x\n',
  sleepy: 'steps:\n  - sleep 60\n',
  // `parallel` on a worker: children placed where the parent runs.
  'remote-fan': `worker_selector:\n  pool: x\nsteps:\n  - name: fan\n    call: item-child\n    parallel:\n      items: [a, b]\n      max_concurrent: 2\n    output: RESULTS\n---\n${ITEM_CHILD}`,
  // `parallel` in a local run whose step sends the children to a worker.
  'local-fan': `steps:\n  - name: fan\n    call: item-child\n    worker_selector:\n      pool: x\n    parallel:\n      items: [a, b]\n    output: RESULTS\n---\n${ITEM_CHILD}`,
  // `parallel` in a local run, children in-process (no selector).
  'inproc-fan': `steps:\n  - name: fan\n    call: item-child\n    parallel: [c, d]\n    output: RESULTS\n---\n${ITEM_CHILD}`,
};

// A parent's secret handed to its child as a param: the coordinator and the worker process (which
// inherits this environment) both resolve it.
const SECRET = 'sub-secret-7c1e94b2';
process.env.TRELLIS_TEST_SUB_SECRET = SECRET;
const SECRET_CHILD = 'name: secret-child\nparams: "TOKEN=none"\nsteps:\n  - name: show\n    command: echo "token=$TOKEN sha=$(printf %s "$TOKEN" | sha256sum | cut -c1-16)"\n    output: SHOWN\n';
const secretParent = (head: string, stepExtra: string): string =>
  `${head}secrets:\n  - {name: API_TOKEN, provider: env, key: TRELLIS_TEST_SUB_SECRET}\nsteps:\n  - name: child\n    call: secret-child\n    params: "TOKEN=\${API_TOKEN}"\n${stepExtra}---\n${SECRET_CHILD}`;
Object.assign(DAGS, {
  // The child runs in the coordinator's process, queued for the worker, or asked for by a parent on the worker.
  'secret-inproc': secretParent('', ''),
  'secret-to-worker': secretParent('', '    worker_selector:\n      pool: x\n'),
  'secret-remote': secretParent('worker_selector:\n  pool: x\n', ''),
  // The secret is the item of a `parallel` step: the child's ITEM.
  'secret-fan': `secrets:\n  - {name: API_TOKEN, provider: env, key: TRELLIS_TEST_SUB_SECRET}\nsteps:\n  - name: fan\n    call: secret-item-child\n    parallel: "\${API_TOKEN}"\n---\nname: secret-item-child\nsteps:\n  - name: show\n    command: echo "item=$ITEM sha=$(printf %s "$ITEM" | sha256sum | cut -c1-16)"\n`,
});

let t: TestCoordinator;
let worker: WorkerProcess | undefined;

async function run(name: string, id: string): Promise<Json | undefined> {
  return (await t.call('GET', `/dag-runs/${name}/${id}`)).json.dagRun as Json | undefined;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${worker !== undefined ? `\nworker output:\n${worker.output()}` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function ended(name: string, id: string, timeoutMs?: number): Promise<Json> {
  return until(`${name}/${id} to end`, async () => {
    const r = await run(name, id);
    return r !== undefined && [2, 3, 4, 6, 8].includes(r.status as number) ? r : undefined;
  }, timeoutMs);
}

async function childrenOf(parentId: string): Promise<ChildRow[]> {
  return t.coordinator.db.query<ChildRow>(
    `SELECT dag_name AS "dagName", dag_run_id AS "dagRunId", status, worker_id AS "workerId", dispatch_target AS "dispatchTarget",
       worker_selector AS "workerSelector", run_env AS "runEnv", queue_name AS "queueName", trigger
     FROM runs WHERE parent_dag_run_id = $1 ORDER BY run_env->>'ITEM', id`,
    [parentId],
  );
}

async function start(name: string, dagRunId: string): Promise<void> {
  const res = await t.call('POST', `/dags/${name}/start`, { dagRunId });
  assert.equal(res.status, 200, JSON.stringify(res.json));
}

async function outputs(name: string, id: string): Promise<Record<string, string>> {
  return ((await t.call('GET', `/dag-runs/${name}/${id}/outputs`)).json as { outputs: Record<string, string> }).outputs;
}

async function stepLog(name: string, id: string, step: string): Promise<string> {
  return ((await t.call('GET', `/dag-runs/${name}/${id}/steps/${step}/log`)).json as { content: string }).content;
}

before(async () => {
  t = await startTestCoordinator('sub_runs_placement', DAGS);
});

after(async () => {
  await worker?.stop();
  await t.stop();
  if (worker !== undefined) assert.notEqual(worker.child.exitCode ?? worker.child.signalCode, null, 'the worker process has exited');
});

describe('a sub-DAG step with worker labels in a run on the local executor', () => {
  test('queues its child for a worker with those labels; stopping the parent while the child waits stops the child', async () => {
    await start('local-slow-parent', 'held');
    const [child] = await until('the child to be queued', async () => {
      const rows = await childrenOf('held');
      return rows.length > 0 ? rows : undefined;
    });
    assert.ok(child);
    assert.deepEqual(
      [child.dagName, child.status, child.dispatchTarget, child.workerSelector, child.trigger, child.queueName],
      ['sleepy', 5, 'remote', { pool: 'x' }, 'sub', 'local-slow-parent/sub'],
    );
    const queued = await run('sleepy', child.dagRunId);
    assert.equal(queued?.parentDAGRunId, 'held');
    assert.equal((queued?.conditions as Array<{ reason: string }>)[0]?.reason, 'NoAvailableWorker', 'it waits for a worker, not for the local executor');
    assert.equal((await run('local-slow-parent', 'held'))?.status, 1, 'the parent waits for its child');
    await new Promise((r) => setTimeout(r, 500));
    assert.equal((await childrenOf('held'))[0]?.status, 5, 'the local executor never picks it up');

    assert.equal((await t.call('POST', '/dag-runs/local-slow-parent/held/stop')).status, 200);
    assert.equal((await ended('local-slow-parent', 'held', 10_000)).status, 3);
    const stopped = await ended('sleepy', child.dagRunId, 10_000);
    assert.equal(stopped.status, 3);
  });

  test('once a worker with the labels runs the child, the parent finishes with its outputs', async () => {
    await start('local-parent', 'ok');
    const [child] = await until('the child to be queued', async () => {
      const rows = await childrenOf('ok');
      return rows[0]?.status === 5 ? rows : undefined;
    });
    assert.ok(child);
    assert.deepEqual([child.dispatchTarget, child.workerSelector], ['remote', { pool: 'x' }]);

    assert.ok(t.coordinator.grpcAddress);
    worker = startWorkerProcess(t.coordinator.grpcAddress, 'worker-x', 'pool=x', t.dir);
    const parent = await ended('local-parent', 'ok');
    assert.equal(parent.status, 4, String(parent.error));
    const [done] = await childrenOf('ok');
    assert.deepEqual([done?.status, done?.workerId], [4, 'worker-x']);
    const where = (await outputs('pooled', child.dagRunId)).where ?? '';
    assert.ok(where.startsWith(`on ${worker.workDir}/`), `the child ran in the worker's work directory (${where})`);
    assert.equal((await outputs('local-parent', 'ok')).after, `child said ${where}`, "the parent's next step read the child's output");
  });

  test('stopping the parent while its child runs on the worker stops the child', async () => {
    await start('local-slow-parent', 'running');
    const child = await until('the child to run on the worker', async () => {
      const [row] = await childrenOf('running');
      return row?.status === 1 && row.workerId === 'worker-x' ? row : undefined;
    });
    await new Promise((r) => setTimeout(r, 300));
    const asked = Date.now();
    assert.equal((await t.call('POST', '/dag-runs/local-slow-parent/running/stop')).status, 200);
    assert.equal((await ended('sleepy', child.dagRunId, 10_000)).status, 3);
    assert.equal((await ended('local-slow-parent', 'running', 10_000)).status, 3);
    assert.ok(Date.now() - asked < 5000, `stopped ${Date.now() - asked} ms after the request`);
  });
});

describe('parallel sub-runs get their ITEM wherever they run', () => {
  for (const [dag, how] of [['remote-fan', 'a parent on a worker'], ['local-fan', 'a local parent whose step names worker labels']] as const) {
    test(`${how}: each child on the worker sees its own ITEM as env var and as \${ITEM}`, async () => {
      assert.ok(worker, 'the worker of the tests above is running');
      const id = `${dag}-1`;
      await start(dag, id);
      const parent = await ended(dag, id);
      assert.equal(parent.status, 4, String(parent.error));
      const children = await childrenOf(id);
      assert.deepEqual(children.map((c) => [c.runEnv, c.status, c.workerId]), [[{ ITEM: 'a' }, 4, 'worker-x'], [{ ITEM: 'b' }, 4, 'worker-x']]);
      for (const [i, item] of ['a', 'b'].entries()) {
        const childId = children[i]?.dagRunId ?? '';
        assert.equal((await outputs('item-child', childId)).shown, `item=${item} ref=${item}`);
        assert.equal(await stepLog('item-child', childId, 'show'), `item=${item} ref=${item}`);
      }
      assert.deepEqual(JSON.parse((await outputs(dag, id)).results ?? ''), [{ shown: 'item=a ref=a' }, { shown: 'item=b ref=b' }]);
    });
  }

  test('in-process children record their ITEM, and a retry of one on the local executor gets it again', async () => {
    await start('inproc-fan', 'inproc');
    assert.equal((await ended('inproc-fan', 'inproc')).status, 4);
    const children = await childrenOf('inproc');
    assert.deepEqual(children.map((c) => [c.runEnv, c.dispatchTarget, c.workerId.startsWith('local:')]), [[{ ITEM: 'c' }, 'local', true], [{ ITEM: 'd' }, 'local', true]]);
    const childId = children[0]?.dagRunId ?? '';
    assert.equal((await outputs('item-child', childId)).shown, 'item=c ref=c');
    const before = (await run('item-child', childId))?.attemptId;
    assert.equal((await t.call('POST', `/dag-runs/item-child/${childId}/retry`, {})).status, 200);
    const retried = await until('the retry to end', async () => {
      const r = await run('item-child', childId);
      return r !== undefined && r.attemptId !== before && r.status === 4 ? r : undefined;
    });
    assert.equal(retried.status, 4);
    assert.equal(await stepLog('item-child', childId, 'show'), 'item=c ref=c', 'the new attempt ran with the recorded ITEM');
  });
});

describe("a parent's secret handed to a sub-run as a param", () => {
  const MASK = '*******';
  const sha = createHash('sha256').update(SECRET).digest('hex').slice(0, 16);

  for (const [dag, how] of [
    ['secret-inproc', 'a child in the coordinator process'],
    ['secret-to-worker', 'a local parent whose child is queued for the worker'],
    ['secret-remote', 'a parent on the worker asking for its child'],
  ] as const) {
    test(`${how}: the child gets the value, and no record, node, log or output shows it`, async () => {
      assert.ok(worker, 'the worker of the tests above is running');
      const id = `${dag}-1`;
      await start(dag, id);
      const parent = await ended(dag, id);
      assert.equal(parent.status, 4, String(parent.error));
      const [child] = await childrenOf(id);
      assert.ok(child);
      const node = (parent.nodes as Json[])[0] as { subRuns: Array<{ params: string }> };
      assert.equal(node.subRuns[0]?.params, `TOKEN=${MASK}`);
      const childRun = await run('secret-child', child.dagRunId);
      assert.deepEqual(JSON.parse(String(childRun?.params)), [{ name: 'TOKEN', value: MASK }]);
      assert.equal(await stepLog('secret-child', child.dagRunId, 'show'), `token=${MASK} sha=${sha}`, 'the child ran with the real value and masked it');
      assert.equal((await outputs('secret-child', child.dagRunId)).shown, `token=${MASK} sha=${sha}`);
      const [leaks] = await t.coordinator.db.query<{ runs: number; nodes: number; outputs: number }>(
        `SELECT (SELECT count(*)::int FROM runs WHERE params LIKE $1 OR error LIKE $1 OR run_env::text LIKE $1) AS runs,
           (SELECT count(*)::int FROM run_nodes WHERE data::text LIKE $1) AS nodes,
           (SELECT count(*)::int FROM run_outputs WHERE metadata::text LIKE $1 OR outputs::text LIKE $1) AS outputs`,
        [`%${SECRET}%`],
      );
      assert.deepEqual(leaks, { runs: 0, nodes: 0, outputs: 0 });
    });
  }

  async function leakedRuns(): Promise<number> {
    const [row] = await t.coordinator.db.query<{ n: number }>('SELECT count(*)::int AS n FROM runs WHERE params LIKE $1 OR error LIKE $1 OR run_env::text LIKE $1', [`%${SECRET}%`]);
    return row?.n ?? -1;
  }

  test('a retry under a new id and a reschedule of such a child run with the real value and show it masked', async () => {
    await start('secret-inproc', 'secret-again');
    assert.equal((await ended('secret-inproc', 'secret-again')).status, 4);
    const [child] = await childrenOf('secret-again');
    assert.ok(child);
    for (const [action, id] of [['retry', 'secret-child-retried'], ['reschedule', 'secret-child-rescheduled']] as const) {
      const res = await t.call('POST', `/dag-runs/secret-child/${child.dagRunId}/${action}`, { dagRunId: id });
      assert.equal(res.status, 200, JSON.stringify(res.json));
      const again = await ended('secret-child', id);
      assert.equal(again.status, 4, String(again.error));
      assert.deepEqual(JSON.parse(String(again.params)), [{ name: 'TOKEN', value: MASK }], id);
      assert.equal(await stepLog('secret-child', id, 'show'), `token=${MASK} sha=${sha}`, `${id} ran with the real value and masked it`);
    }
    assert.equal(await leakedRuns(), 0);
  });

  test('a secret that is the ITEM of a parallel child reaches it, and its record (and a retry of it) shows ITEM masked', async () => {
    await start('secret-fan', 'secret-fan-1');
    assert.equal((await ended('secret-fan', 'secret-fan-1')).status, 4);
    const [child] = await childrenOf('secret-fan-1');
    assert.ok(child);
    assert.deepEqual(child.runEnv, { ITEM: MASK });
    assert.equal(await stepLog('secret-item-child', child.dagRunId, 'show'), `item=${MASK} sha=${sha}`);
    const retried = await t.call('POST', `/dag-runs/secret-item-child/${child.dagRunId}/retry`, { dagRunId: 'secret-item-retried' });
    assert.equal(retried.status, 200, JSON.stringify(retried.json));
    assert.equal((await ended('secret-item-child', 'secret-item-retried')).status, 4);
    assert.equal(await stepLog('secret-item-child', 'secret-item-retried', 'show'), `item=${MASK} sha=${sha}`);
    assert.equal(await leakedRuns(), 0);
  });
});
