// Dispatch across real processes: placement by worker_selector, waiting for a matching worker,
// a global queue's limit under load, and a worker with the wrong token.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Cluster, waitFor } from './support/cluster.js';

const TERMINAL = new Set([2, 3, 4, 6, 8]);

const cluster = new Cluster({
  dags: {
    'on-a': 'worker_selector:\n  pool: a\nsteps:\n  - name: where\n    command: echo "$DAG_RUN_WORK_DIR"\n    output: WHERE\n',
    'on-b': 'worker_selector:\n  pool: b\nsteps:\n  - name: where\n    command: echo "$DAG_RUN_WORK_DIR"\n    output: WHERE\n',
    'slow-parent': [
      'worker_selector:\n  pool: a\nsteps:\n  - name: child\n    call: sleepy\n    worker_selector:\n      pool: b',
      '---\nname: sleepy\nsteps:\n  - sleep 60\n',
    ].join('\n'),
    gated: 'worker_selector:\n  pool: b\nsteps:\n  - name: gate\n    command: echo ready\n    approval:\n      input: [TICKET]\n      required: [TICKET]\n  - name: deploy\n    command: echo "deploying $TICKET"\n    output: DEPLOYED\n',
    'slow-a': 'worker_selector:\n  pool: a\nsteps:\n  - sleep 60\n',
    'on-gpu': 'worker_selector:\n  gpu: "true"\nsteps:\n  - echo gpu\n',
    fanout: [
      'worker_selector:\n  pool: a\nsteps:\n  - name: child\n    call: where-am-i\n    worker_selector:\n      pool: b',
      '  - name: report\n    command: echo "parent in $DAG_RUN_WORK_DIR, child in ${child.outputs.where}"\n    output: REPORT',
      '---\nname: where-am-i\nsteps:\n  - name: w\n    command: echo "$DAG_RUN_WORK_DIR"\n    output: WHERE\n',
    ].join('\n'),
    // Parent and child both need the one-slot worker: the waiting parent must lend its slot.
    'solo-parent': [
      'worker_selector:\n  pool: solo\nsteps:\n  - name: child\n    call: solo-child\n    worker_selector:\n      pool: solo',
      '---\nname: solo-child\nsteps:\n  - name: c\n    command: echo nested\n    output: NESTED\n',
    ].join('\n'),
    'limited': 'queue: four\nworker_selector:\n  shared: "yes"\nsteps:\n  - sleep 0.05\n',
  },
  config: 'queues:\n  - name: four\n    maxConcurrency: 4\n',
});

async function runStatus(dag: string, id: string): Promise<{ status: number; error: string; conditions?: Array<{ reason: string; message: string }> }> {
  const { json } = await cluster.call('GET', `/dag-runs/${dag}/${id}`);
  return json.dagRun as { status: number; error: string; conditions?: Array<{ reason: string; message: string }> };
}

async function finished(dag: string, id: string, timeoutMs = 30_000) {
  return waitFor(`${dag}/${id} to finish`, async () => {
    const run = await runStatus(dag, id);
    return TERMINAL.has(run.status) ? run : undefined;
  }, timeoutMs);
}

before(async () => {
  await cluster.start();
  cluster.startWorker('worker-a', 'pool=a,shared=yes');
  cluster.startWorker('worker-b', 'pool=b,shared=yes');
  await cluster.workerReady('worker-a');
  await cluster.workerReady('worker-b');
});

after(async () => {
  await cluster.stop();
});

describe('distributed dispatch', () => {
  test('runs land on the worker their selector names', async () => {
    for (let i = 0; i < 3; i += 1) {
      for (const pool of ['a', 'b']) assert.equal((await cluster.call('POST', `/dags/on-${pool}/start`, { dagRunId: `${pool}${i}` })).status, 200);
    }
    for (let i = 0; i < 3; i += 1) {
      for (const pool of ['a', 'b']) {
        assert.equal((await finished(`on-${pool}`, `${pool}${i}`)).status, 4);
        const outputs = (await cluster.call('GET', `/dag-runs/on-${pool}/${pool}${i}/outputs`)).json as { outputs: { where: string } };
        assert.match(outputs.outputs.where, new RegExp(`/work-worker-${pool}/`), `run ${pool}${i} ran in ${outputs.outputs.where}`);
      }
    }
    const [row] = await cluster.sql<{ n: number }>("SELECT count(*)::int AS n FROM runs WHERE dag_name = 'on-a' AND worker_id <> 'worker-a'");
    assert.equal(row?.n, 0);
  });

  test('a selector nobody matches waits with WorkerSelectorNotMatched, then runs when a matching worker starts', async () => {
    assert.equal((await cluster.call('POST', '/dags/on-gpu/start', { dagRunId: 'g1' })).status, 200);
    await new Promise((r) => setTimeout(r, 1500));
    const waiting = await runStatus('on-gpu', 'g1');
    assert.equal(waiting.status, 5);
    assert.equal(waiting.conditions?.[0]?.reason, 'WorkerSelectorNotMatched');
    assert.match(waiting.conditions?.[0]?.message ?? '', /gpu=true/);
    cluster.startWorker('worker-gpu', 'gpu=true');
    assert.equal((await finished('on-gpu', 'g1')).status, 4);
  });

  test('300 runs through a global queue with maxConcurrency 4 never exceed 4 running, and all succeed', async () => {
    let maxRunning = 0;
    let samples = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const [row] = await cluster.sql<{ n: number }>("SELECT count(*)::int AS n FROM runs WHERE queue_name = 'four' AND status IN (1, 7)");
        maxRunning = Math.max(maxRunning, row?.n ?? 0);
        samples += 1;
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    for (let i = 0; i < 300; i += 1) {
      const { status } = await cluster.call('POST', '/dags/limited/enqueue', { dagRunId: `q${i}` });
      assert.equal(status, 200);
    }
    const done = await waitFor('300 queued runs to finish', async () => {
      const rows = await cluster.sql<{ status: number; n: number }>("SELECT status, count(*)::int AS n FROM runs WHERE dag_name = 'limited' GROUP BY status");
      const terminal = rows.filter((r) => TERMINAL.has(r.status)).reduce((a, r) => a + r.n, 0);
      return terminal === 300 ? rows : undefined;
    }, 240_000, 500);
    sampling = false;
    await sampler;
    assert.deepEqual(done.map((r) => [r.status, r.n]), [[4, 300]]);
    assert.ok(samples > 20, `sampled ${samples} times`);
    assert.ok(maxRunning <= 4, `at most 4 running at once, saw ${maxRunning}`);
    assert.ok(maxRunning >= 2, `the queue ran runs in parallel (saw at most ${maxRunning})`);
    const perWorker = await cluster.sql<{ worker: string; n: number }>("SELECT worker_id AS worker, count(*)::int AS n FROM runs WHERE dag_name = 'limited' GROUP BY worker_id ORDER BY worker_id");
    assert.deepEqual(perWorker.map((r) => r.worker).sort(), ['worker-a', 'worker-b']);
    // Each attempt's folder is emptied once its reports are delivered: at most a few idle folders
    // stay for reuse, each with an empty work directory and its log files truncated to nothing.
    const idleFolders = await waitFor('the workers to empty their attempt folders', () => {
      const folders = ['worker-a', 'worker-b'].flatMap((id) => {
        const runs = join(cluster.dir, `work-${id}`, 'runs');
        return existsSync(runs) ? readdirSync(runs).map((name) => join(runs, name)) : [];
      });
      const entries = folders.flatMap((dir) => readdirSync(dir, { recursive: true }).map((entry) => join(dir, String(entry))));
      const emptied = entries.every((path) => (path.endsWith('/work') ? readdirSync(path).length === 0 : statSync(path).size === 0));
      return Promise.resolve(emptied ? folders : undefined);
    }, 15_000, 250);
    assert.ok(idleFolders.length <= 2 * 2 * 4, `idle folders within the pool's limit: ${idleFolders.length}`);
  });

  test('a sub-DAG step with a worker_selector runs its child on the worker it names', async () => {
    assert.equal((await cluster.call('POST', '/dags/fanout/start', { dagRunId: 'f1' })).status, 200);
    const parent = await finished('fanout', 'f1');
    assert.equal(parent.status, 4, parent.error);
    const outputs = (await cluster.call('GET', '/dag-runs/fanout/f1/outputs')).json as { outputs: { report: string } };
    assert.match(outputs.outputs.report, /parent in .*\/work-worker-a\/.*, child in .*\/work-worker-b\//);
    const [child] = await cluster.sql<{ worker: string; parent: string; root: string }>(
      "SELECT worker_id AS worker, parent_dag_run_id AS parent, root_dag_run_id AS root FROM runs WHERE dag_name = 'where-am-i'",
    );
    assert.deepEqual(child, { worker: 'worker-b', parent: 'f1', root: 'f1' });
  });

  test('a parent waiting for a child that needs its own worker lends its slot (one poller, no deadlock)', async () => {
    cluster.startWorker('worker-solo', 'pool=solo', { pollers: 1 });
    await cluster.workerReady('worker-solo');
    try {
      assert.equal((await cluster.call('POST', '/dags/solo-parent/start', { dagRunId: 's1' })).status, 200);
      const parent = await finished('solo-parent', 's1');
      assert.equal(parent.status, 4, parent.error);
      const runs = await cluster.sql<{ dag: string; worker: string }>("SELECT dag_name AS dag, worker_id AS worker FROM runs WHERE root_dag_run_id = 's1' ORDER BY dag_name");
      assert.deepEqual(runs, [{ dag: 'solo-child', worker: 'worker-solo' }, { dag: 'solo-parent', worker: 'worker-solo' }]);
      // The loan ended with the wait: the worker is back to its one poller.
      await waitFor('the lent poller to stop', async () => {
        const { json } = await cluster.call('GET', '/workers');
        const solo = (json.workers as Array<{ id: string; pollers: { total: number } }>).find((w) => w.id === 'worker-solo');
        return solo?.pollers.total === 1 ? true : undefined;
      }, 10_000);
    } finally {
      await cluster.terminateWorker('worker-solo');
    }
  });

  test('stopping a run on a worker takes effect within a couple of seconds', async () => {
    assert.equal((await cluster.call('POST', '/dags/slow-a/start', { dagRunId: 'stop-me' })).status, 200);
    await waitFor('the run to start', async () => ((await runStatus('slow-a', 'stop-me')).status === 1 ? true : undefined), 15_000);
    await new Promise((r) => setTimeout(r, 500));
    const asked = Date.now();
    assert.equal((await cluster.call('POST', '/dag-runs/slow-a/stop-me/stop')).status, 200);
    const stopped = await finished('slow-a', 'stop-me', 10_000);
    assert.equal(stopped.status, 3);
    assert.ok(Date.now() - asked < 3000, `aborted ${Date.now() - asked} ms after the stop`);
  });

  test('stopping a parent on one worker stops its sub-DAG child on the other', async () => {
    assert.equal((await cluster.call('POST', '/dags/slow-parent/start', { dagRunId: 'p1' })).status, 200);
    const child = await waitFor('the child to run on worker-b', async () => {
      const [row] = await cluster.sql<{ id: string; status: number; worker: string }>("SELECT dag_run_id AS id, status, worker_id AS worker FROM runs WHERE dag_name = 'sleepy' AND parent_dag_run_id = 'p1'");
      return row?.status === 1 && row.worker === 'worker-b' ? row : undefined;
    }, 20_000);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal((await cluster.call('POST', '/dag-runs/slow-parent/p1/stop')).status, 200);
    assert.equal((await finished('slow-parent', 'p1', 15_000)).status, 3);
    assert.equal((await finished('sleepy', child.id, 15_000)).status, 3);
  });

  test('approving or rejecting a step that waits on a worker reaches the worker', async () => {
    // The DAG's own queue runs one at a time, and a waiting run holds its slot: one after the other.
    const waiting = (id: string) => waitFor(`${id} to wait`, async () => ((await runStatus('gated', id)).status === 7 ? true : undefined), 20_000);
    assert.equal((await cluster.call('POST', '/dags/gated/start', { dagRunId: 'g-ok' })).status, 200);
    await waiting('g-ok');
    assert.equal((await cluster.call('POST', '/dag-runs/gated/g-ok/steps/nope/approve', { inputs: {} })).status, 404);
    assert.equal((await cluster.call('POST', '/dag-runs/gated/g-ok/steps/gate/approve', { inputs: { TICKET: 'OPS-7' } })).status, 200);
    assert.equal((await finished('gated', 'g-ok')).status, 4);
    assert.equal((await cluster.call('POST', '/dags/gated/start', { dagRunId: 'g-no' })).status, 200);
    await waiting('g-no');
    assert.equal((await cluster.call('POST', '/dag-runs/gated/g-no/steps/gate/reject', { reason: 'not today' })).status, 200);
    assert.equal((await finished('gated', 'g-no')).status, 8);
    const outputs = (await cluster.call('GET', '/dag-runs/gated/g-ok/outputs')).json as { outputs: { deployed: string } };
    assert.equal(outputs.outputs.deployed, 'deploying OPS-7');
  });

  test('a worker with the wrong token is refused and exits', async () => {
    const stranger = cluster.startWorker('stranger', 'pool=a', { token: 'not-the-token' });
    const code = await stranger.exited;
    assert.equal(code, 3);
    assert.match(stranger.output(), /refused this worker: invalid worker token/);
    const body = (await cluster.call('GET', '/workers')).json as { workers: Array<{ id: string }> };
    assert.ok(!body.workers.some((w) => w.id === 'stranger'));
  });
});
