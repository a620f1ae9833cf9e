import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';

let t: TestCoordinator;

const DAGS = {
  hello: 'params:\n  - {name: WHO, type: string, default: world}\n  - {name: N, type: integer, default: 1}\nsteps:\n  - name: greet\n    command: echo "hello ${WHO} ${N}"\n    output: GREETING\n  - {name: fail-soft, command: echo warn >&2}\n',
  slow: 'steps:\n  - {name: wait, command: sleep 30}\n',
  gated: 'steps:\n  - name: gate\n    command: echo ready\n    approval: {input: [TICKET], required: [TICKET]}\n  - {name: after, command: echo "ticket $TICKET"}\n',
  broken: 'steps:\n  - {name: boom, command: exit 3}\n',
  batch: 'queue: batch\nsteps:\n  - {name: s, command: sleep 0.3}\n',
  // No worker has these labels: its runs stay queued.
  parked: 'worker_selector:\n  pool: nowhere\nsteps:\n  - {name: s, command: "true"}\n',
};

type Json = Record<string, unknown>;

async function start(name: string, body: Json = {}): Promise<string> {
  const res = await t.call('POST', `/dags/${name}/start`, body);
  assert.equal(res.status, 200, JSON.stringify(res.json));
  return res.json.dagRunId as string;
}

before(async () => {
  t = await startTestCoordinator('api_runs', DAGS, { queues: [{ name: 'batch', maxConcurrency: 2 }] });
});
after(async () => t.stop());

describe('starting runs', () => {
  test('start runs on the local executor; details, nodes, logs and outputs are served', async () => {
    const id = await start('hello', { params: JSON.stringify({ WHO: 'api', N: '7' }) });
    const run = await t.waitForRunStatus('hello', id, [4]);
    assert.equal(run.statusLabel, 'succeeded');
    assert.equal(run.conditions, undefined, 'only queued runs carry conditions');
    assert.deepEqual((run.nodes as Json[]).map((n) => [(n.step as Json).name, n.status]), [['greet', 4], ['fail-soft', 4]]);
    assert.notEqual(run.startedAt, '');
    const stepLog = await t.call('GET', `/dag-runs/hello/${id}/steps/greet/log`);
    assert.equal(stepLog.json.content, 'hello api 7');
    const stderr = await t.call('GET', `/dag-runs/hello/${id}/steps/fail-soft/log?stream=stderr`);
    assert.equal(stderr.json.content, 'warn');
    const runLog = await t.call('GET', `/dag-runs/hello/${id}/log?head=1`);
    assert.match(String(runLog.json.content), /started/);
    assert.equal(runLog.json.hasMore, true);
    const outputs = await t.call('GET', `/dag-runs/hello/${id}/outputs`);
    assert.deepEqual((outputs.json as { outputs: Json }).outputs, { greeting: 'hello api 7' });
    assert.equal(((outputs.json as { metadata: Json }).metadata).status, 'succeeded');
    const latest = await t.call('GET', '/dag-runs/hello/latest');
    assert.equal((latest.json.dagRun as Json).dagRunId, id);
    // The stored DAG it was started from: the run page links it without searching the DAG list.
    assert.equal((latest.json.dagRun as Json).fileName, 'hello');
    const dag = await t.call('GET', '/dags/hello');
    assert.equal((dag.json.latestDAGRun as Json).dagRunId, id);
  });

  test('params are validated and coerced before anything is queued', async () => {
    const res = await t.call('POST', '/dags/hello/start', { params: JSON.stringify({ N: 'many' }) });
    assert.equal(res.status, 400);
    assert.equal(res.json.code, 'bad_request');
    assert.deepEqual((res.json.details as { errors: string[] }).errors, ['params.N: must be an integer, got "many"']);
  });

  test('an undeclared param may not set a reserved variable: 400 naming the key, on start, enqueue and inline runs', async () => {
    for (const [path, body] of [
      ['/dags/broken/start', { params: JSON.stringify({ PATH: '/tmp/evilbin:/usr/bin' }) }],
      ['/dags/broken/enqueue', { params: JSON.stringify(['DAG_RUN_ID=spoofed']) }],
      ['/dag-runs', { spec: 'steps:\n  - {name: s, command: "true"}\n', params: 'LD_PRELOAD=/tmp/x.so' }],
    ] as const) {
      const res = await t.call('POST', path, body);
      assert.deepEqual([res.status, res.json.code], [400, 'bad_request'], `${path}: ${JSON.stringify(res.json)}`);
      const key = /params\.(\w+)/.exec(String(res.json.message))?.[1];
      assert.ok(key !== undefined && ['PATH', 'DAG_RUN_ID', 'LD_PRELOAD'].includes(key), String(res.json.message));
      assert.match(String(res.json.message), /reserved/);
    }
  });

  test('custom dagRunId; a duplicate is 409 already_exists; a bad id is 400', async () => {
    assert.equal(await start('hello', { dagRunId: 'my-id-1' }), 'my-id-1');
    const dup = await t.call('POST', '/dags/hello/start', { dagRunId: 'my-id-1' });
    assert.deepEqual([dup.status, dup.json.code], [409, 'already_exists']);
    assert.equal((await t.call('POST', '/dags/hello/start', { dagRunId: 'bad id!' })).status, 400);
    assert.equal((await t.call('POST', '/dags/missing/start', {})).status, 404);
  });

  test('singleton: 409 while the DAG has an active run; stop aborts it', async () => {
    const id = await start('slow');
    await t.waitForRunStatus('slow', id, [1]);
    const refused = await t.call('POST', '/dags/slow/start', { singleton: true });
    assert.deepEqual([refused.status, refused.json.code], [409, 'already_running']);
    const stop = await t.call('POST', `/dag-runs/slow/${id}/stop`);
    assert.equal(stop.status, 200);
    const stopped = await t.waitForRunStatus('slow', id, [3]);
    assert.equal(stopped.statusLabel, 'aborted');
    const again = await t.call('POST', `/dag-runs/slow/${id}/stop`);
    assert.deepEqual([again.status, again.json.code], [400, 'not_running']);
  });

  test('a run list read again shows what changed since: a run that moved on, a newer run', async () => {
    const listed = async (): Promise<Json[]> => (await t.call('GET', '/dag-runs/slow?limit=1')).json.dagRuns as Json[];
    const id = await start('slow');
    await t.waitForRunStatus('slow', id, [1]);
    assert.deepEqual((await listed()).map((r) => [r.dagRunId, r.statusLabel]), [[id, 'running']]);
    assert.deepEqual((await listed()).map((r) => [r.dagRunId, r.statusLabel]), [[id, 'running']], 'read again unchanged');
    await t.call('POST', `/dag-runs/slow/${id}/stop`);
    await t.waitForRunStatus('slow', id, [3]);
    assert.deepEqual((await listed()).map((r) => [r.dagRunId, r.statusLabel]), [[id, 'aborted']]);
    const newer = await start('slow');
    await t.waitForRunStatus('slow', newer, [1]);
    const page = (await t.call('GET', '/dag-runs/slow?limit=1')).json;
    assert.deepEqual((page.dagRuns as Json[]).map((r) => r.dagRunId), [newer]);
    assert.equal(typeof page.nextCursor, 'string', 'the older run is on the next page');
    await t.call('POST', `/dag-runs/slow/${newer}/stop`);
    await t.waitForRunStatus('slow', newer, [3]);
  });

  test('DAG-local queue runs one at a time: the second waits with a condition, and can be dequeued', async () => {
    const first = await start('slow');
    await t.waitForRunStatus('slow', first, [1]);
    const second = await start('slow');
    const queued = await t.waitForRunStatus('slow', second, [5]);
    const [condition] = queued.conditions as Json[];
    assert.equal(condition?.reason, 'QueueConcurrencyLimitReached');
    assert.equal(condition?.type, 'Queued');
    assert.equal((await t.call('GET', `/dag-runs/slow/${second}/dequeue`)).status, 200);
    assert.equal((await t.waitForRunStatus('slow', second, [3])).error, 'dequeued');
    assert.equal((await t.call('GET', `/dag-runs/slow/${second}/dequeue`)).status, 404);
    await t.call('POST', `/dag-runs/slow/${first}/stop`);
    await t.waitForRunStatus('slow', first, [3]);
  });

  test('a global queue admits at most maxConcurrency runs at once', async () => {
    const ids = await Promise.all(Array.from({ length: 5 }, () => t.call('POST', '/dags/batch/enqueue', {}).then((r) => r.json.dagRunId as string)));
    let maxRunning = 0;
    for (;;) {
      const running = await t.call('GET', '/dag-runs?name=batch&status=1');
      maxRunning = Math.max(maxRunning, (running.json.dagRuns as Json[]).length);
      const done = await t.call('GET', '/dag-runs?name=batch&status=4');
      if ((done.json.dagRuns as Json[]).length === ids.length) break;
      await new Promise((r) => setTimeout(r, 30));
    }
    assert.ok(maxRunning <= 2, `saw ${maxRunning} running`);
    assert.equal((await t.call('POST', '/dags/hello/enqueue', { queue: 'nope' })).status, 400);
  });

  test('inline specs run without being stored; name rules apply', async () => {
    const res = await t.call('POST', '/dag-runs', { spec: 'steps:\n  - echo inline\n', name: 'adhoc.run-1' });
    assert.equal(res.status, 200);
    const run = await t.waitForRunStatus('adhoc.run-1', res.json.dagRunId as string, [4]);
    assert.equal(run.name, 'adhoc.run-1');
    assert.equal((await t.call('GET', '/dags/adhoc.run-1')).status, 400);
    assert.equal((await t.call('POST', '/dag-runs', { spec: 'steps: []' })).status, 400);
    assert.equal((await t.call('POST', '/dag-runs', {})).json.code, 'bad_request');
    assert.equal((await t.call('POST', '/dag-runs', { spec: 'steps: [echo]', name: 'x'.repeat(41) })).status, 400);
  });

  test('start-sync returns the finished run, or 408 with the dagRunId', async () => {
    const ok = await t.call('POST', '/dags/hello/start-sync', { timeout: 30 });
    assert.equal(ok.status, 200);
    assert.equal((ok.json.dagRun as Json).status, 4);
    const slow = await t.call('POST', '/dags/slow/start-sync', { timeout: 1 });
    assert.equal(slow.status, 408);
    assert.equal(slow.json.code, 'timeout');
    await t.call('POST', `/dag-runs/slow/${String(slow.json.dagRunId)}/stop`);
    assert.equal((await t.call('POST', '/dags/hello/start-sync', { timeout: 0 })).status, 400);
  });
});

describe('run management', () => {
  test('retry: a new attempt of a finished run; 400 already_running while active', async () => {
    const id = await start('broken');
    const first = await t.waitForRunStatus('broken', id, [2]);
    const retried = await t.call('POST', `/dag-runs/broken/${id}/retry`, {});
    assert.equal(retried.status, 200);
    let again = await t.waitForRunStatus('broken', id, [2, 1, 5]);
    while (again.attemptId === first.attemptId || again.status !== 2) again = await t.waitForRunStatus('broken', id, [2]);
    assert.notEqual(again.attemptId, first.attemptId, 'the retry is a new attempt');
    assert.match(String(again.log), /\.2\/run\.log$/, 'each attempt keeps its own log');
    const other = await t.call('POST', `/dag-runs/broken/${id}/retry`, { dagRunId: 'broken-copy' });
    assert.equal(other.json.dagRunId, 'broken-copy');
    await t.waitForRunStatus('broken', 'broken-copy', [2]);
    const slowId = await start('slow');
    await t.waitForRunStatus('slow', slowId, [1]);
    const busy = await t.call('POST', `/dag-runs/slow/${slowId}/retry`, {});
    assert.deepEqual([busy.status, busy.json.code], [400, 'already_running']);
    await t.call('POST', `/dag-runs/slow/${slowId}/stop`);
    await t.waitForRunStatus('slow', slowId, [3]);
  });

  test('approval: the run waits (7); approve with the required input resumes it', async () => {
    const id = await start('gated');
    await t.waitForRunStatus('gated', id, [7]);
    // The waiting step says what a decision carries, so a client can ask for it.
    const nodes = ((await t.call('GET', `/dag-runs/gated/${id}`)).json.dagRun as { nodes: Array<{ step: { name: string; approval?: unknown } }> }).nodes;
    assert.deepEqual(nodes.map((n) => [n.step.name, n.step.approval]), [
      ['gate', { prompt: '', input: ['TICKET'], required: ['TICKET'] }],
      ['after', undefined],
    ]);
    const missing = await t.call('POST', `/dag-runs/gated/${id}/steps/gate/approve`, { inputs: {} });
    assert.deepEqual([missing.status, missing.json.code], [400, 'bad_request']);
    assert.equal((await t.call('POST', `/dag-runs/gated/${id}/steps/gate/approve`, { inputs: { TICKET: 'OPS-1' } })).status, 200);
    await t.waitForRunStatus('gated', id, [4]);
    assert.equal((await t.call('GET', `/dag-runs/gated/${id}/steps/after/log`)).json.content, 'ticket OPS-1');
  });

  test('listing: newest first, limit bounds, cursor, status filter', async () => {
    const page = await t.call('GET', '/dag-runs?limit=2');
    assert.equal((page.json.dagRuns as Json[]).length, 2);
    assert.equal(typeof page.json.nextCursor, 'string');
    const next = await t.call('GET', `/dag-runs?limit=2&cursor=${String(page.json.nextCursor)}`);
    assert.notDeepEqual((next.json.dagRuns as Json[]).map((r) => r.dagRunId), (page.json.dagRuns as Json[]).map((r) => r.dagRunId));
    assert.equal((await t.call('GET', '/dag-runs?limit=501')).status, 400);
    assert.equal((await t.call('GET', '/dag-runs?cursor=nonsense')).status, 400);
    const failed = await t.call('GET', '/dag-runs/broken?status=2');
    assert.ok((failed.json.dagRuns as Json[]).every((r) => r.status === 2));
    const history = await t.call('GET', '/dags/hello/dag-runs');
    assert.deepEqual((history.json.gridData as Json[]).map((g) => g.name), ['greet', 'fail-soft']);
  });

  test('identical lists in flight together share one answer, and never one read before a run the caller saw queued', async () => {
    const alone = await t.call('GET', '/dag-runs?limit=50');
    const together = await Promise.all(Array.from({ length: 8 }, () => t.call('GET', '/dag-runs?limit=50')));
    for (const res of together) assert.deepEqual([res.status, res.json], [200, alone.json], 'each caller gets the whole list');
    // Lists keep being asked for while a run is queued: every one asked after the queueing was
    // acknowledged holds it, though a read begun before it may still be running.
    const polling = Array.from({ length: 6 }, () => t.call('GET', '/dag-runs?limit=50'));
    const queued = (await t.call('POST', '/dags/parked/enqueue', {})).json.dagRunId as string;
    const after = await Promise.all(Array.from({ length: 6 }, () => t.call('GET', '/dag-runs?limit=50')));
    for (const res of after) assert.equal((res.json.dagRuns as Json[])[0]?.dagRunId, queued);
    for (const res of await Promise.all(polling)) assert.equal(res.status, 200);
    const dagPages = await Promise.all([1, 2, 1, 2].map((page) => t.call('GET', `/dags?perPage=2&page=${page}`)));
    assert.deepEqual(dagPages[0]?.json, dagPages[2]?.json);
    assert.notDeepEqual((dagPages[0]?.json.dags as Json[]).map((d) => d.fileName), (dagPages[1]?.json.dags as Json[]).map((d) => d.fileName), 'other query strings are other reads');
  });

  test('a listed run (built by the database) is its details without the details-only fields; queued ones list conditions []', async () => {
    const queuedId = (await t.call('POST', '/dags/parked/enqueue', { dagRunId: 'listed-queued' })).json.dagRunId as string;
    const listed = (await t.call('GET', '/dag-runs?limit=20')).json.dagRuns as Json[];
    assert.ok(listed.length > 5);
    const detailsOnly = ['error', 'attemptId', 'fileName', 'profileName', 'profileEntries', 'nodes', 'handlers', 'gitCommit'];
    for (const item of listed) {
      const details = (await t.call('GET', `/dag-runs/${String(item.name)}/${String(item.dagRunId)}`)).json.dagRun as Json;
      const expected = Object.fromEntries(Object.entries(details).filter(([key]) => !detailsOnly.includes(key)));
      if (item.status === 5) expected.conditions = [];
      assert.deepEqual(item, expected, `${String(item.name)}/${String(item.dagRunId)}`);
    }
    assert.deepEqual(listed.find((r) => r.dagRunId === queuedId)?.conditions, []);
    const [latest] = (await t.call('GET', '/dag-runs?name=hello&limit=1')).json.dagRuns as Json[];
    const dag = ((await t.call('GET', '/dags?name=hello')).json.dags as Json[]).find((d) => d.fileName === 'hello');
    assert.deepEqual(dag?.latestDAGRun, latest, 'the DAG list shows the same summary');
    assert.deepEqual((await t.call('GET', '/dags/hello')).json.latestDAGRun, latest, 'and so do the DAG details');
  });

  test('stop-all stops every queued run, past the first page of 500', async () => {
    for (let i = 0; i < 520; i += 1) assert.equal((await t.call('POST', '/dags/parked/enqueue', { dagRunId: `p${i}` })).status, 200);
    const stopped = await t.call('POST', '/dags/parked/stop-all');
    assert.deepEqual([stopped.status, stopped.json.errors], [200, []]);
    const left = (await t.call('GET', '/dag-runs?name=parked&status=5')).json as { dagRuns: unknown[] };
    assert.equal(left.dagRuns.length, 0);
    const aborted = (await t.call('GET', '/dag-runs?name=parked&status=3&limit=500')).json as { dagRuns: unknown[]; nextCursor?: string };
    assert.equal(aborted.dagRuns.length, 500);
    assert.ok(aborted.nextCursor !== undefined, 'more than 500 were stopped');
  });

  test('step status by hand: 0-5 only, unknown step 404, unknown run 404', async () => {
    const id = await start('broken');
    await t.waitForRunStatus('broken', id, [2]);
    assert.equal((await t.call('PATCH', `/dag-runs/broken/${id}/steps/boom/status`, { status: 4 })).status, 200);
    const run = await t.waitForRunStatus('broken', id, [2]);
    assert.equal((run.nodes as Json[])[0]?.status, 4);
    assert.equal((await t.call('PATCH', `/dag-runs/broken/${id}/steps/boom/status`, { status: 9 })).status, 400);
    assert.equal((await t.call('PATCH', `/dag-runs/broken/${id}/steps/nope/status`, { status: 4 })).status, 404);
    const missing = await t.call('GET', '/dag-runs/broken/no-such-run');
    assert.deepEqual([missing.status, missing.json.code, missing.json.message], [404, 'not_found', 'DAG run not found']);
  });
});
