// Losing processes: a worker killed mid-run, and the coordinator killed with runs queued and
// running. Every run ends, none is lost, none executes twice (each appends its id to a file).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Cluster, waitFor } from './support/cluster.js';

const TERMINAL = [2, 3, 4, 6, 8];

let ledger = '';
const cluster = new Cluster({
  dags: {},
  config: 'queues:\n  - name: wide\n    maxConcurrency: 6\n  - name: four\n    maxConcurrency: 4\n',
});

function dag(pool: string, seconds: number): string {
  return `queue: wide\nworker_selector:\n  pool: ${pool}\nsteps:\n  - name: work\n    command: sleep ${seconds} && echo "$DAG_RUN_ID" >> ${ledger}\n`;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function statuses(dagName: string): Promise<Map<string, { status: number; error: string }>> {
  const rows = await cluster.sql<{ id: string; status: number; error: string }>('SELECT dag_run_id AS id, status, error FROM runs WHERE dag_name = $1', [dagName]);
  return new Map(rows.map((r) => [r.id, { status: r.status, error: r.error }]));
}

before(async () => {
  ledger = join(cluster.dir, 'ledger.txt');
  writeFileSync(join(cluster.dir, 'dags', 'slow-a.yaml'), dag('a', 6));
  writeFileSync(join(cluster.dir, 'dags', 'quick-b.yaml'), dag('b', 1));
  writeFileSync(join(cluster.dir, 'dags', 'mixed.yaml'), dag('b', 2));
  await cluster.start();
  cluster.startWorker('worker-a', 'pool=a', { pollers: 2 });
  cluster.startWorker('worker-b', 'pool=b', { pollers: 3 });
  await cluster.workerReady('worker-a');
  await cluster.workerReady('worker-b');
});

after(async () => {
  await cluster.stop();
});

describe('failures', () => {
  test('SIGTERM lets a worker finish its running task before it exits', async () => {
    writeFileSync(join(cluster.dir, 'dags', 'graceful.yaml'), dag('c', 3));
    cluster.startWorker('worker-c', 'pool=c', { pollers: 1 });
    await cluster.workerReady('worker-c');
    assert.equal((await cluster.call('POST', '/dags/graceful/start', { dagRunId: 'g1' })).status, 200);
    // Its step reported running: the worker holds the task (a run only handed out may be given back at SIGTERM).
    await waitFor('the step to run on the worker', async () => {
      const { json } = await cluster.call('GET', '/dag-runs/graceful/g1');
      return (json.dagRun as { nodes?: Array<{ status: number }> }).nodes?.[0]?.status === 1 ? true : undefined;
    }, 15_000);
    const signalled = Date.now();
    assert.equal(await cluster.terminateWorker('worker-c'), 0);
    assert.equal((await statuses('graceful')).get('g1')?.status, 4);
    // The step sleeps 3 s; the process must not linger for the 60 s grace period once it drained.
    const exitedAfter = Date.now() - signalled;
    assert.ok(exitedAfter < 15_000, `the worker exited ${exitedAfter} ms after SIGTERM`);
  });

  test('kill -9 of a worker mid-run fails its run with a clear error within 20 s; the other worker is unaffected', async () => {
    assert.equal((await cluster.call('POST', '/dags/slow-a/start', { dagRunId: 'doomed' })).status, 200);
    for (let i = 0; i < 4; i += 1) assert.equal((await cluster.call('POST', '/dags/quick-b/enqueue', { dagRunId: `fine${i}` })).status, 200);
    // Its step runs: the worker acknowledged the task (one only handed out goes back to the queue when its worker dies).
    await waitFor('the step to run on worker-a', async () => {
      const { json } = await cluster.call('GET', '/dag-runs/slow-a/doomed');
      return (json.dagRun as { nodes?: Array<{ status: number }> }).nodes?.[0]?.status === 1 ? true : undefined;
    }, 15_000);
    const killedAt = Date.now();
    await cluster.killWorker('worker-a');
    const failed = await waitFor('the lost run to fail', async () => {
      const run = (await statuses('slow-a')).get('doomed');
      return run?.status === 2 ? run : undefined;
    }, 25_000, 250);
    const elapsed = Date.now() - killedAt;
    assert.ok(elapsed < 20_000, `failed ${elapsed} ms after the kill`);
    assert.match(failed.error, /worker worker-a was lost/);
    const quick = await waitFor('the other worker runs to finish', async () => {
      const runs = await statuses('quick-b');
      return [...runs.values()].every((r) => TERMINAL.includes(r.status)) && runs.size === 4 ? runs : undefined;
    }, 30_000);
    assert.deepEqual([...quick.values()].map((r) => r.status), [4, 4, 4, 4]);
    const api = (await cluster.call('GET', '/dag-runs/slow-a/doomed')).json as { dagRun: { status: number; error: string } };
    assert.equal(api.dagRun.status, 2);
  });

  test('a worker frozen past the heartbeat timeout loses its run; resumed, it is told to cancel it and kills the step', async () => {
    const pidFile = join(cluster.dir, 'frozen.pid');
    writeFileSync(join(cluster.dir, 'dags', 'frozen.yaml'), `worker_selector:\n  pool: f\nsteps:\n  - name: work\n    command: echo $$ > ${pidFile} && sleep 60 && echo "$DAG_RUN_ID" >> ${ledger}\n`);
    const frozen = cluster.startWorker('worker-f', 'pool=f', { pollers: 1 });
    await cluster.workerReady('worker-f');
    const pid = frozen.child.pid ?? 0;
    try {
      assert.equal((await cluster.call('POST', '/dags/frozen/start', { dagRunId: 'ice' })).status, 200);
      const stepPid = await waitFor('the step to start', () => Promise.resolve(existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '' ? Number(readFileSync(pidFile, 'utf8')) : undefined), 15_000);
      // SIGSTOP: the worker process stays alive but silent, as behind a network partition; its step goes on.
      process.kill(pid, 'SIGSTOP');
      const failed = await waitFor('the run to fail as lost', async () => {
        const run = (await statuses('frozen')).get('ice');
        return run?.status === 2 ? run : undefined;
      }, 30_000, 250);
      assert.match(failed.error, /^worker worker-f was lost/);
      assert.ok(isAlive(stepPid), 'the step ran on while its worker was frozen');
      process.kill(pid, 'SIGCONT');
      await waitFor('the resumed worker to kill the step', () => Promise.resolve(isAlive(stepPid) ? undefined : true), 15_000, 100);
      await waitFor('the resumed worker to list no running task', async () => {
        const { json } = await cluster.call('GET', '/workers');
        const worker = (json.workers as Array<{ id: string; health_status: string; running_tasks: unknown[] }>).find((w) => w.id === 'worker-f');
        return worker?.health_status === 'WORKER_HEALTH_STATUS_HEALTHY' && worker.running_tasks.length === 0 ? true : undefined;
      }, 15_000);
      assert.deepEqual((await statuses('frozen')).get('ice'), failed, 'the late reports of the lost attempt changed nothing');
      assert.match(frozen.output(), /coordinator cancelled a run; stopping it/);
    } finally {
      process.kill(pid, 'SIGCONT');
      await cluster.terminateWorker('worker-f');
    }
  });

  test('kill -9 of a worker running 4 runs of a queue of 4, restarted with the same id within 5 s: its runs fail at once and the queue moves on', async () => {
    writeFileSync(join(cluster.dir, 'dags', 'four.yaml'), 'queue: four\nworker_selector:\n  pool: r\nsteps:\n  - name: work\n    command: sleep 30\n');
    cluster.startWorker('worker-r', 'pool=r', { pollers: 4 });
    await cluster.workerReady('worker-r');
    const ids = Array.from({ length: 10 }, (_, i) => `r${i}`);
    try {
      for (const id of ids) assert.equal((await cluster.call('POST', '/dags/four/enqueue', { dagRunId: id })).status, 200);
      // Four started a while ago (as runs that were running for some time before the crash).
      const started = await waitFor('four runs to have started for more than 4 s', async () => {
        const rows = await cluster.sql<{ id: string }>("SELECT dag_run_id AS id FROM runs WHERE dag_name = 'four' AND status = 1 AND acked_at < now() - interval '4 seconds'");
        return rows.length === 4 ? rows.map((r) => r.id) : undefined;
      }, 30_000, 250);
      await cluster.killWorker('worker-r');
      cluster.startWorker('worker-r', 'pool=r', { pollers: 4 });
      const restartedAt = Date.now();
      const failed = await waitFor('the restarted worker to register and its old runs to fail', async () => {
        const rows = await cluster.sql<{ id: string; status: number; error: string }>('SELECT dag_run_id AS id, status, error FROM runs WHERE dag_name = $1 AND dag_run_id = ANY($2)', ['four', started]);
        return rows.every((r) => r.status === 2) ? rows : undefined;
      }, 12_000, 200);
      // Well within the 15 s heartbeat timeout: the restarted worker heartbeats, so only the register reconciliation can end them.
      const elapsed = Date.now() - restartedAt;
      assert.ok(elapsed < 8000, `failed ${elapsed} ms after the restart`);
      for (const run of failed) assert.match(run.error, /^worker worker-r no longer has this run/);
      // The queue is not blocked: the restarted worker takes the next four.
      await waitFor('the next runs to start on the restarted worker', async () => {
        const [row] = await cluster.sql<{ n: number }>("SELECT count(*)::int AS n FROM runs WHERE dag_name = 'four' AND status = 1 AND worker_id = 'worker-r' AND acked_at IS NOT NULL");
        return row?.n === 4 ? true : undefined;
      }, 15_000);
    } finally {
      for (const id of ids) await cluster.call('POST', `/dag-runs/four/${id}/stop`);
      await cluster.terminateWorker('worker-r');
    }
  });

  test('kill -9 of the coordinator with runs queued and running: after a restart every run ends once, none lost', async () => {
    const ids = Array.from({ length: 12 }, (_, i) => `m${i}`);
    for (const id of ids) assert.equal((await cluster.call('POST', '/dags/mixed/enqueue', { dagRunId: id })).status, 200);
    await waitFor('runs to be running', async () => ([...(await statuses('mixed')).values()].filter((r) => r.status === 1).length >= 3 ? true : undefined), 15_000);
    await cluster.killCoordinator();
    await new Promise((r) => setTimeout(r, 2000));
    await cluster.startCoordinator();
    const final = await waitFor('every run to end', async () => {
      const runs = await statuses('mixed');
      return runs.size === ids.length && [...runs.values()].every((r) => TERMINAL.includes(r.status)) ? runs : undefined;
    }, 90_000, 500);
    assert.deepEqual(ids.map((id) => [id, final.get(id)?.status]), ids.map((id) => [id, 4]));
    const lines = existsSync(ledger) ? readFileSync(ledger, 'utf8').split('\n').filter((l) => l.startsWith('m')) : [];
    const counts = new Map<string, number>();
    for (const line of lines) counts.set(line, (counts.get(line) ?? 0) + 1);
    assert.deepEqual(ids.map((id) => [id, counts.get(id) ?? 0]), ids.map((id) => [id, 1]), 'each run executed exactly once');
    // The worker says so when it loses the coordinator and when it finds it again.
    const workerLog = cluster.workers.get('worker-b')?.output() ?? '';
    assert.match(workerLog, /lost contact with the coordinator; running tasks go on/);
    assert.match(workerLog, /coordinator reachable again/);
  });
});
