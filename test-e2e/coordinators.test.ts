// Two coordinators as separate processes on one PostgreSQL database, each with its own data and
// DAG directories (the DAG files are copied into both), and workers as processes: a run started
// through one coordinator is run by a worker connected to the other, is stopped through the
// other, and a worker given both addresses moves to the survivor when its coordinator is
// killed (-9) mid-run; the run ends there, Succeeded, with its whole log. A worker started
// while the first coordinator it is given is down registers with the next.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { callAt, Cluster, waitFor, type Answer, type Peer } from './support/cluster.js';

const SUCCESS = 4;
const ABORTED = 3;
const TERMINAL = new Set([2, 3, 4, 6, 8]);

const cluster = new Cluster({
  dags: {
    'on-a': 'worker_selector:\n  pool: a\nsteps:\n  - name: where\n    command: echo "on a"\n',
    'on-b': 'worker_selector:\n  pool: b\nsteps:\n  - name: where\n    command: echo "on b"\n',
    'long-a': 'worker_selector:\n  pool: a\nsteps:\n  - sleep 60\n',
    // Output before and after the coordinator it reports to is killed.
    'survivor': 'worker_selector:\n  pool: both\nsteps:\n  - name: work\n    command: echo "before the kill" && sleep 8 && echo "after the kill"\n',
  },
});
let b: Peer;

/** The first coordinator is A; `b` is the peer. */
const onA = (method: string, path: string, body?: unknown): Promise<Answer> => cluster.call(method, path, body);
const onB = (method: string, path: string, body?: unknown): Promise<Answer> => callAt(b.api, method, path, body);

interface RunView {
  status: number;
  workerId?: string;
}

async function run(via: typeof onA, dag: string, id: string): Promise<RunView> {
  const answer = await via('GET', `/dag-runs/${dag}/${id}`);
  assert.equal(answer.status, 200, JSON.stringify(answer.json));
  return answer.json.dagRun as RunView;
}

async function ended(via: typeof onA, dag: string, id: string, timeoutMs = 30_000): Promise<RunView> {
  return waitFor(`${dag}/${id} to end`, async () => {
    const view = await run(via, dag, id);
    return TERMINAL.has(view.status) ? view : undefined;
  }, timeoutMs);
}

async function runningOn(dag: string, id: string): Promise<string> {
  const [row] = await waitFor(`${dag}/${id} to run`, async () => {
    const rows = await cluster.sql<{ worker_id: string }>('SELECT worker_id FROM runs WHERE dag_name = $1 AND dag_run_id = $2 AND status = 1 AND acked_at IS NOT NULL', [dag, id]);
    return rows.length > 0 ? rows : undefined;
  }, 30_000);
  return row?.worker_id ?? '';
}

before(async () => {
  await cluster.start();
  b = await cluster.startPeerWithWorkers();
});

after(async () => {
  await cluster.stop();
});

describe('two coordinators on one database', () => {
  test('a run started through B is run by the worker connected to A at once (NOTIFY wakes its poll), and the reverse; both coordinators see it end', async () => {
    const asked = Date.now();
    assert.equal((await onB('POST', '/dags/on-a/start', { dagRunId: 'b-to-a' })).status, 200);
    assert.equal((await onA('POST', '/dags/on-b/start', { dagRunId: 'a-to-b' })).status, 200);
    for (const [dag, id, worker] of [['on-a', 'b-to-a', 'worker-a'], ['on-b', 'a-to-b', 'worker-b']] as const) {
      assert.equal((await ended(onA, dag, id)).status, SUCCESS);
      assert.equal((await run(onB, dag, id)).status, SUCCESS);
      const [row] = await cluster.sql<{ worker_id: string }>('SELECT worker_id FROM runs WHERE dag_name = $1 AND dag_run_id = $2', [dag, id]);
      assert.equal(row?.worker_id, worker);
    }
    // A worker's long poll lasts 20 s: ending well before means the other coordinator's NOTIFY woke it.
    assert.ok(Date.now() - asked < 5000, `both runs took ${Date.now() - asked} ms`);
  });

  test('a run on a worker connected to A is stopped through B', async () => {
    assert.equal((await onA('POST', '/dags/long-a/start', { dagRunId: 'stop-via-b' })).status, 200);
    assert.equal(await runningOn('long-a', 'stop-via-b'), 'worker-a');
    const asked = Date.now();
    assert.equal((await onB('POST', '/dag-runs/long-a/stop-via-b/stop')).status, 200);
    assert.equal((await ended(onA, 'long-a', 'stop-via-b', 15_000)).status, ABORTED);
    assert.equal((await run(onB, 'long-a', 'stop-via-b')).status, ABORTED);
    assert.ok(Date.now() - asked < 10_000, `the stop took ${Date.now() - asked} ms`);
  });

  test('A killed (-9) mid-run: the worker given both addresses moves to B, and the run ends there Succeeded with its whole log', async (t) => {
    assert.equal((await onB('POST', '/dags/survivor/start', { dagRunId: 'failover' })).status, 200);
    assert.equal(await runningOn('survivor', 'failover'), 'worker-both');
    await waitFor('the first line of output to reach a coordinator', async () => {
      const page = await onB('GET', '/dag-runs/survivor/failover/steps/work/log');
      return page.status === 200 && String(page.json.content).includes('before the kill') ? true : undefined;
    }, 10_000);
    await cluster.killCoordinator();
    const killed = Date.now();
    const [moved] = await waitFor('the worker to register with B', async () => {
      const rows = await cluster.sql<{ at: Date }>("SELECT registered_at AS at FROM workers WHERE id = 'worker-both' AND registered_at > $1", [new Date(killed)]);
      return rows.length > 0 ? rows : undefined;
    }, 20_000, 50);
    t.diagnostic(`the worker registered with B ${(moved?.at.getTime() ?? 0) - killed} ms after A was killed`);
    // The survivor answers for the run: it ends there, never failed as lost.
    const view = await ended(onB, 'survivor', 'failover', 40_000);
    assert.equal(view.status, SUCCESS, JSON.stringify(view));
    const log = await onB('GET', '/dag-runs/survivor/failover/steps/work/log');
    assert.equal(log.status, 200);
    assert.match(String(log.json.content), /before the kill\nafter the kill/);
    await cluster.workerReady('worker-both', b.api);
    assert.match(cluster.workers.get('worker-both')?.output() ?? '', /moving to the next coordinator/);
    // And B hands it new work.
    assert.equal((await onB('POST', '/dags/survivor/start', { dagRunId: 'after-failover' })).status, 200);
    assert.equal((await ended(onB, 'survivor', 'after-failover', 30_000)).status, SUCCESS);
    // A worker starting while the first coordinator it is given is down registers with the next.
    cluster.startWorker('worker-late', 'pool=late', { coordinators: [cluster.grpcAddress, b.grpcAddress] });
    await cluster.workerReady('worker-late', b.api);
  });
});
