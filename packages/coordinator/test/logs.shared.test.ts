// Run logs with two coordinators on one database and separate data directories: a worker reports
// to A, and B pages and follows the logs from the database, also once A's data directory is gone.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { appendLogChunks, getRun, type Db } from '@trellis/store';
import { openTestDb } from '@trellis/store/testing';
import { createSilentLogger, loadServerConfig, startCoordinator, type Coordinator } from '@trellis/coordinator';
import { startWorkerProcess, type WorkerProcess } from './support/worker-process.js';
import { readEvents } from './support/sse-events.js';

const LINES = 150_000;
const DAGS = {
  // About 1.3 MB of output on a worker: many pieces, lines spanning them.
  'remote-log': `worker_selector:\n  pool: logs\nsteps:\n  - name: count\n    command: seq 1 ${LINES}\n`,
  // Output over about a second and a half, followed live.
  'slow-log': 'steps:\n  - name: tick\n    command: for i in 1 2 3 4; do echo "tick $i é"; sleep 0.4; done\n',
};

let dir: string;
let db: Db;
let cleanup: () => Promise<void>;
let a: Coordinator;
let b: Coordinator;
let worker: WorkerProcess | undefined;

async function startOne(id: string, on: Db): Promise<Coordinator> {
  const config = loadServerConfig({
    cwd: dir,
    env: {},
    overrides: { port: 0, grpcPort: 0, dagsDir: join(dir, 'dags'), dataDir: join(dir, `data-${id}`), timezone: 'UTC', coordinatorId: id },
  });
  return startCoordinator(config, createSilentLogger(), { watch: false, db: on, checkResponses: true });
}

async function call(c: Coordinator, path: string, init: RequestInit = {}): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${c.apiUrl}${path}`, { ...init, headers: { 'content-type': 'application/json' } });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

async function waitForEnd(c: Coordinator, name: string, id: string): Promise<number> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const { json } = await call(c, `/dag-runs/${name}/${id}`);
    const status = (json.dagRun as { status: number } | undefined)?.status ?? 0;
    if ([2, 3, 4, 6, 8].includes(status)) return status;
    if (Date.now() > deadline) throw new Error(`run ${name}/${id} did not end: status ${status}; worker said ${worker?.output() ?? ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-logs-two-'));
  mkdirSync(join(dir, 'dags'));
  for (const [name, yaml] of Object.entries(DAGS)) writeFileSync(join(dir, 'dags', `${name}.yaml`), yaml);
  const opened = await openTestDb('logs_shared');
  ({ db, cleanup } = opened);
  // On PostgreSQL each coordinator gets its own pool, as two processes would; PGlite is one session.
  a = await startOne('logs-a', db);
  b = await startOne('logs-b', opened.second !== undefined ? await opened.second() : db);
});

after(async () => {
  await worker?.stop();
  await b.close();
  await a.close();
  await cleanup();
  rmSync(dir, { recursive: true, force: true });
});

describe('run logs shared by two coordinators', () => {
  test("a worker reports to A; B pages the run's logs from the database, with A's data directory gone", async () => {
    worker = startWorkerProcess(a.grpcAddress ?? '', 'logs-w', 'pool=logs', dir);
    assert.equal((await call(b, '/dags/remote-log/start', { method: 'POST', body: JSON.stringify({ dagRunId: 'big-1' }) })).status, 200);
    assert.equal(await waitForEnd(b, 'remote-log', 'big-1'), 4, worker.output());
    rmSync(join(dir, 'data-logs-a'), { recursive: true, force: true });
    const numbers = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => String(from + i)).join('\n');
    const tail = (await call(b, '/dag-runs/remote-log/big-1/steps/count/log?tail=3')).json;
    assert.deepEqual(tail, { content: numbers(LINES - 2, LINES), lineCount: 3, totalLines: LINES, hasMore: true, isEstimate: false });
    const middle = (await call(b, '/dag-runs/remote-log/big-1/steps/count/log?offset=123456&limit=2')).json;
    assert.equal(middle.content, numbers(123_456, 123_457));
    const head = (await call(a, '/dag-runs/remote-log/big-1/steps/count/log?head=2')).json;
    assert.equal(head.content, numbers(1, 2));
    const runLog = (await call(b, '/dag-runs/remote-log/big-1/log?tail=100')).json as { content: string; totalLines: number };
    assert.ok(runLog.totalLines > 0 && runLog.content.includes('count'), runLog.content);
  });

  test('a chunk stored by a coordinator that died before answering is kept once when the worker resends it elsewhere', async () => {
    const run = await getRun(db, 'remote-log', 'big-1');
    assert.ok(run !== undefined);
    const ref = { runId: run.id, attemptId: run.attemptId };
    const streams = await db.query<{ stream: string; size: string }>('SELECT stream, size::text AS size FROM run_log_streams WHERE run_id = $1 AND attempt_id = $2', [ref.runId, ref.attemptId]);
    const stdout = streams.find((s) => s.stream.endsWith('.out'));
    assert.ok(stdout !== undefined, JSON.stringify(streams));
    // Its last bytes once more, as the resend of a report whose answer was lost.
    const size = Number(stdout.size);
    const resent = Buffer.from(`${LINES - 1}\n${LINES}\n`);
    const again = await appendLogChunks(db, ref.runId, ref.attemptId, [{ stream: stdout.stream, offset: size - resent.length, data: resent }]);
    assert.deepEqual([again.stored, again.refused], [0, []]);
    const tail = (await call(b, '/dag-runs/remote-log/big-1/steps/count/log?tail=2')).json;
    assert.deepEqual([tail.content, tail.totalLines], [`${LINES - 1}\n${LINES}`, LINES]);
  });

  test("B follows a run's step output live while A's executor or worker stores it, and resumes by byte offset", async () => {
    assert.equal((await call(a, '/dags/slow-log/start', { method: 'POST', body: JSON.stringify({ dagRunId: 'slow-1' }) })).status, 200);
    const events = await readEvents(`${b.apiUrl}/events/dag-runs/slow-log/slow-1/steps/tick/log`);
    const logs = events.filter((e) => e.event === 'log').map((e) => JSON.parse(e.data) as { offset: number; content: string });
    const expected = 'tick 1 é\ntick 2 é\ntick 3 é\ntick 4 é\n';
    assert.equal(logs.map((l) => l.content).join(''), expected);
    assert.ok(logs.length >= 2, `the output came in ${logs.length} event(s): followed while the step ran`);
    assert.deepEqual(events.at(-1), { event: 'end', data: JSON.stringify({ status: 4, statusLabel: 'succeeded' }) });
    assert.equal(logs.at(-1)?.offset, Buffer.byteLength(expected));
    // Resumed after the first event's id: the rest, nothing twice.
    const first = events.find((e) => e.event === 'log');
    const rest = await readEvents(`${a.apiUrl}/events/dag-runs/slow-log/slow-1/steps/tick/log`, { 'last-event-id': first?.id ?? '' });
    const resumed = rest.filter((e) => e.event === 'log').map((e) => (JSON.parse(e.data) as { content: string }).content).join('');
    assert.equal((logs[0]?.content ?? '') + resumed, expected);
    // The run log follows the same way; an unknown step of an ended run is not found.
    const runLog = await readEvents(`${b.apiUrl}/events/dag-runs/slow-log/slow-1/log`);
    assert.match(runLog.filter((e) => e.event === 'log').map((e) => (JSON.parse(e.data) as { content: string }).content).join(''), /tick/);
    assert.equal((await fetch(`${b.apiUrl}/events/dag-runs/slow-log/slow-1/steps/nope/log`)).status, 404);
  });
});
