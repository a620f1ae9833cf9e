import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';
import { rawWorkerClient } from './support/worker-client.js';

let t: TestCoordinator;

interface Entry {
  id: string;
  occurredAt: string;
  kind: string;
  type: string;
  dagName: string;
  dagRunId: string;
  attemptId: string;
  userId: string;
  message: string;
  data: Record<string, unknown>;
}

async function events(query: string): Promise<{ status: number; entries: Entry[]; total?: number; nextCursor?: string | null; code?: string }> {
  const { status, json } = await t.call('GET', `/event-logs${query}`);
  return { status, ...(json as { entries: Entry[]; total?: number; nextCursor?: string | null; code?: string }) };
}

/**
 * Events that are written after the change they describe, not in its transaction (definition
 * changes, leadership won in the background), appear a moment later: wait for the first one.
 */
async function firstEvent(query: string): Promise<{ entries: Entry[] }> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const page = await events(query);
    if (page.entries.length > 0 || Date.now() > deadline) return page;
    await new Promise((r) => setTimeout(r, 50));
  }
}

before(async () => {
  t = await startTestCoordinator('events', {
    hello: 'steps:\n  - "true"\n',
    failing: 'steps:\n  - exit 3\n',
    // Each step runs a second: a local run's reports are coalesced, and a step quicker than a
    // report write could go from not started to succeeded in one.
    pair: 'steps:\n  - name: first\n    command: sleep 1\n  - name: second\n    command: sleep 1\n',
  });
  await t.call('POST', '/dags/hello/start', { dagRunId: 'ok-1' });
  await t.call('POST', '/dags/failing/start', { dagRunId: 'bad-1' });
  for (let i = 0; i < 50; i += 1) {
    const runs = await Promise.all(['hello/ok-1', 'failing/bad-1'].map(async (p) => ((await t.call('GET', `/dag-runs/${p}`)).json.dagRun as { status: number }).status));
    if (runs.every((s) => s === 4 || s === 2)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
});
after(async () => t.stop());

describe('GET /event-logs', () => {
  test('every run records its lifecycle, newest first, in the statement that changed it', async () => {
    const { status, entries, total } = await events('?dagRunId=ok-1&kind=dag_run');
    assert.equal(status, 200);
    assert.deepEqual(entries.map((e) => e.type), ['dag.run.succeeded', 'dag.run.started', 'dag.run.queued']);
    assert.equal(total, 3);
    assert.ok(entries.every((e) => e.kind === 'dag_run' && e.dagName === 'hello' && e.attemptId !== ''));
    // Beside them, the audit event of whoever started it (anonymous: auth is off here).
    const audit = await events('?dagRunId=ok-1&kind=audit');
    assert.deepEqual(audit.entries.map((e) => [e.type, e.userId]), [['run.started', 'anonymous']]);
    const failed = await events('?type=dag.run.failed');
    assert.deepEqual(failed.entries.map((e) => e.dagRunId), ['bad-1']);
  });

  test('worker registration, scheduler leadership and definition changes are recorded', async () => {
    const worker = rawWorkerClient(t.coordinator.grpcAddress ?? '');
    await worker.call('Register', { workerId: 'w-events', labels: { a: 'b' }, pollers: 1, hostname: 'h', version: 't' });
    worker.close();
    const registered = await firstEvent('?kind=worker');
    assert.equal(registered.entries[0]?.type, 'worker.registered');
    assert.equal(registered.entries[0]?.data.workerId, 'w-events');
    const leader = await firstEvent('?kind=scheduler');
    assert.equal(leader.entries[0]?.type, 'scheduler.leader.changed');
    await t.call('POST', '/dags', { name: 'fresh' });
    const changed = await firstEvent('?kind=dag&dagName=fresh');
    assert.equal(changed.entries[0]?.type, 'dag.definition.changed');
  });

  test('offset pages carry a total; cursor pages chain with nextCursor; time filters bound the window', async () => {
    const all = await events('?kind=dag_run&limit=1000');
    const page = await events('?kind=dag_run&limit=2&offset=2');
    assert.deepEqual(page.entries.map((e) => e.id), all.entries.slice(2, 4).map((e) => e.id));
    assert.equal(page.total, all.entries.length);
    const seen: string[] = [];
    let cursor: string | null | undefined;
    do {
      const next = await events(`?kind=dag_run&limit=2&paginationMode=cursor${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...next.entries.map((e) => e.id));
      cursor = next.nextCursor;
    } while (cursor);
    assert.deepEqual(seen, all.entries.map((e) => e.id));
    const future = await events(`?startTime=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`);
    assert.deepEqual(future.entries, []);
  });

  test('bad filters are 400 bad_request', async () => {
    for (const query of ['?cursor=nonsense&paginationMode=cursor', '?startTime=yesterday', '?limit=0', '?limit=1001', '?paginationMode=pages']) {
      const { status, code } = await events(query);
      assert.deepEqual([status, code], [400, 'bad_request'], query);
    }
  });
});

interface LiveEvent {
  type: string;
  stepName?: string;
  dagRunId: string;
  status?: number;
  statusLabel: string;
}

/** Reads server-sent `run` (and `node`) events until `count` arrived (or the time runs out). */
async function readEvents(url: string, count: number, headers: Record<string, string> = {}): Promise<Array<{ id: string; event: string; data: LiveEvent }>> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 10_000);
  const res = await fetch(url, { headers, signal: controller.signal });
  assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
  const reader = res.body?.getReader();
  assert.ok(reader);
  const out: Array<{ id: string; event: string; data: LiveEvent }> = [];
  let buffer = '';
  try {
    while (out.length < count) {
      const { value, done } = (await reader.read()) as { value?: Uint8Array; done: boolean };
      if (done) break;
      if (value === undefined) continue;
      buffer += Buffer.from(value).toString();
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const id = /^id: (\d+)$/m.exec(block)?.[1];
        const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (id !== undefined && data !== undefined) out.push({ id, event, data: JSON.parse(data) as LiveEvent });
      }
    }
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  return out;
}

describe('live run events (server-sent events)', () => {
  test('a run stream delivers its status changes as they happen, and resumes after Last-Event-ID', async () => {
    const url = `${t.coordinator.apiUrl}/events/dag-runs/hello/live-1`;
    const live = readEvents(url, 3);
    await new Promise((r) => setTimeout(r, 300));
    await t.call('POST', '/dags/hello/start', { dagRunId: 'live-1' });
    const received = await live;
    assert.deepEqual(received.map((e) => e.data.type), ['dag.run.queued', 'dag.run.started', 'dag.run.succeeded']);
    const resumed = await readEvents(url, 2, { 'last-event-id': received[0]?.id ?? '0' });
    assert.deepEqual(resumed.map((e) => e.data.type), ['dag.run.started', 'dag.run.succeeded']);
  });

  test('each event labels the status as the run record does', async () => {
    const live = readEvents(`${t.coordinator.apiUrl}/events/dag-runs/hello/label-1`, 3);
    await new Promise((r) => setTimeout(r, 300));
    await t.call('POST', '/dags/hello/start', { dagRunId: 'label-1' });
    const received = (await live).map((e) => [e.data.status, e.data.statusLabel]);
    assert.deepEqual(received, [[5, 'queued'], [1, 'running'], [4, 'succeeded']]);
    const record = (await t.call('GET', '/dag-runs/hello/label-1')).json.dagRun as { status: number; statusLabel: string };
    assert.deepEqual([record.status, record.statusLabel], received.at(-1));
  });

  test('the list stream carries every run of a DAG', async () => {
    const live = readEvents(`${t.coordinator.apiUrl}/events/dag-runs?name=failing`, 3);
    await new Promise((r) => setTimeout(r, 300));
    await t.call('POST', '/dags/failing/start', { dagRunId: 'live-bad' });
    assert.deepEqual((await live).map((e) => [e.data.dagRunId, e.data.type]), [['live-bad', 'dag.run.queued'], ['live-bad', 'dag.run.started'], ['live-bad', 'dag.run.failed']]);
  });

  test('with nodes=true a run stream carries each step status change as a node event, in order', async () => {
    const url = `${t.coordinator.apiUrl}/events/dag-runs/pair/steps-1?nodes=true`;
    const live = readEvents(url, 7);
    await new Promise((r) => setTimeout(r, 300));
    await t.call('POST', '/dags/pair/start', { dagRunId: 'steps-1' });
    const received = await live;
    const nodes = received.filter((e) => e.event === 'node').map((e) => [e.data.stepName, e.data.statusLabel, e.data.status]);
    assert.deepEqual(nodes, [['first', 'running', 1], ['first', 'succeeded', 4], ['second', 'running', 1], ['second', 'succeeded', 4]]);
    assert.deepEqual(received.filter((e) => e.event === 'run').map((e) => e.data.type), ['dag.run.queued', 'dag.run.started', 'dag.run.succeeded']);
    // The node's finish time has arrived with its event: the page needs no fetch to show it.
    const done = received.find((e) => e.event === 'node' && e.data.status === 4)?.data as { finishedAt?: string } | undefined;
    assert.ok(done?.finishedAt !== undefined && done.finishedAt !== '');
    const logged = await events('?dagRunId=steps-1&kind=dag_node');
    assert.deepEqual(logged.entries.map((e) => e.type).reverse(), ['dag.node.running', 'dag.node.succeeded', 'dag.node.running', 'dag.node.succeeded']);
    const resumed = await readEvents(url, 4, { 'last-event-id': received.find((e) => e.event === 'node')?.id ?? '0' });
    // The run's final event and its last step's share one statement: compare the steps alone.
    assert.deepEqual(resumed.filter((e) => e.event === 'node').slice(0, 3).map((e) => [e.event, e.data.stepName, e.data.statusLabel]), [['node', 'first', 'succeeded'], ['node', 'second', 'running'], ['node', 'second', 'succeeded']]);
  });

  test('a DAG stream with nodes=true carries its runs\' steps; nodes must be true or false', async () => {
    const live = readEvents(`${t.coordinator.apiUrl}/events/dag-runs?name=pair&nodes=true`, 7);
    await new Promise((r) => setTimeout(r, 300));
    await t.call('POST', '/dags/pair/start', { dagRunId: 'steps-2' });
    const received = await live;
    assert.equal(received.filter((e) => e.event === 'node' && e.data.dagRunId === 'steps-2').length, 4);
    const bad = await fetch(`${t.coordinator.apiUrl}/events/dag-runs?nodes=yes`);
    assert.deepEqual([bad.status, ((await bad.json()) as { code: string }).code], [400, 'bad_request']);
  });
});
