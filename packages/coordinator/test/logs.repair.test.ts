// Run logs in the database, the hard cases: a log write the database fails, logs of runs recorded
// before logs were stored in the database (files only), and a followed log resumed across a retry.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Db } from '@trellis/store';
import { openTestDb } from '@trellis/store/testing';
import { MAX_HELD_LOG_BYTES } from '../src/execution/persisting-reporter.js';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';
import { readEvents, type SseEvent } from './support/sse-events.js';

const DAGS = {
  // Four lines a while apart: each goes to the database in a write of its own.
  lines: 'steps:\n  - name: write\n    command: for i in 1 2 3 4; do echo "line $i"; sleep 0.2; done\n',
  // 40 MiB in lines of 64 bytes: more than a local run holds while the database refuses its logs.
  flood: 'steps:\n  - name: write\n    command: yes 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde | head -c 41943040\n',
  legacy: 'steps:\n  - name: count\n    command: seq 1 20000\n',
  again: 'steps:\n  - name: say\n    command: echo hello again\n',
};

/** The test database, with one statement made to fail on demand as a dropped connection would. */
class FlakyDb {
  failures = 0;
  private failing: ((sql: string, params: unknown[]) => boolean) | undefined;
  private once = true;
  readonly db: Db;

  constructor(real: Db) {
    this.db = new Proxy(real, {
      get: (target, property) => {
        if (property === 'query') return (sql: string, params?: unknown[]) => this.query(target, sql, params);
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
  }

  /** The next statement `matches` picks fails, once. */
  failOnce(matches: (sql: string, params: unknown[]) => boolean): void {
    this.failing = matches;
    this.once = true;
  }

  /** Every statement `matches` picks fails until heal(). */
  failAll(matches: (sql: string, params: unknown[]) => boolean): void {
    this.failing = matches;
    this.once = false;
  }

  heal(): void {
    this.failing = undefined;
  }

  private query(target: Db, sql: string, params?: unknown[]) {
    if (this.failing?.(sql, params ?? []) === true) {
      if (this.once) this.failing = undefined;
      this.failures += 1;
      return Promise.reject(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
    }
    return target.query(sql, params);
  }
}

let t: TestCoordinator;
let flaky: FlakyDb;
let cleanup: () => Promise<void>;

before(async () => {
  const opened = await openTestDb('logs_repair');
  cleanup = opened.cleanup;
  flaky = new FlakyDb(opened.db);
  t = await startTestCoordinator('logs_repair', DAGS, {}, { db: flaky.db });
});

after(async () => {
  await t.stop();
  await cleanup();
});

async function runToEnd(name: string, dagRunId: string): Promise<Record<string, unknown>> {
  assert.equal((await t.call('POST', `/dags/${name}/start`, { dagRunId })).status, 200);
  return t.waitForRunStatus(name, dagRunId, [2, 3, 4, 6, 8]);
}

const logEvents = (events: SseEvent[]) => events.filter((e) => e.event === 'log').map((e) => ({ id: e.id, ...(JSON.parse(e.data) as { attemptId: string; offset: number; content: string }) }));

describe('run logs in the database: failures, upgrades, retries', () => {
  test('a log write the database fails is retried: every line is stored, none lost or stored twice', async () => {
    // The write holding the step's first line fails.
    flaky.failOnce((sql, params) => sql.includes('INSERT INTO run_log_chunks') && params.some((p) => Buffer.isBuffer(p) && p.includes('line 1')));
    const run = await runToEnd('lines', 'flaky-1');
    assert.equal(run.status, 4);
    assert.equal(flaky.failures, 1, 'the log write failed once');
    // Read from the database, not through the API: a read would import the file the engine also wrote.
    const chunks = await flaky.db.query<{ data: Uint8Array }>("SELECT c.data FROM run_log_chunks c JOIN runs r ON r.id = c.run_id WHERE r.dag_run_id = $1 AND c.stream = 'write.out' ORDER BY c.byte_offset", ['flaky-1']);
    assert.equal(Buffer.concat(chunks.map((c) => Buffer.from(c.data))).toString(), 'line 1\nline 2\nline 3\nline 4\n');
    const page = (await t.call('GET', '/dag-runs/lines/flaky-1/steps/write/log')).json;
    assert.deepEqual([page.content, page.totalLines], ['line 1\nline 2\nline 3\nline 4', 4]);
  });

  test('while the database refuses log writes a run holds at most MAX_HELD_LOG_BYTES: the stored log then ends there, without a hole', async () => {
    const FILE_BYTES = 40 * 1024 * 1024;
    flaky.failAll((sql) => sql.includes('INSERT INTO run_log_chunks'));
    assert.equal((await t.call('POST', '/dags/flood/start', { dagRunId: 'flood-1' })).status, 200);
    const out = async (): Promise<string | undefined> => {
      for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
        const file = readdirSync(t.dir, { recursive: true, encoding: 'utf8' }).find((f) => f.includes('flood-1') && f.endsWith('write.out'));
        if (file !== undefined && statSync(join(t.dir, file)).size === FILE_BYTES) return join(t.dir, file);
      }
      return undefined;
    };
    assert.ok((await out()) !== undefined, 'the step wrote its output');
    flaky.heal();
    assert.equal((await t.waitForRunStatus('flood', 'flood-1', [2, 3, 4, 6, 8], 60_000)).status, 4);
    const [stored] = await flaky.db.query<{ size: string; held: string }>(
      "SELECT s.size::text AS size, (SELECT coalesce(sum(length(c.data)), 0) FROM run_log_chunks c WHERE c.run_id = s.run_id AND c.attempt_id = s.attempt_id AND c.stream = s.stream)::text AS held FROM run_log_streams s JOIN runs r ON r.id = s.run_id WHERE r.dag_run_id = $1 AND s.stream = 'write.out'",
      ['flood-1'],
    );
    const size = Number(stored?.size ?? 0);
    assert.ok(size > 0 && size <= MAX_HELD_LOG_BYTES, `stored ${size} bytes`);
    assert.equal(Number(stored?.held), size, 'every stored byte lies before the stored end: no hole');
    // The file on this coordinator's disk still holds the rest: the first read stores it.
    const tail = (await t.call('GET', '/dag-runs/flood/flood-1/steps/write/log?tail=1')).json;
    assert.deepEqual([tail.content, tail.totalLines], ['0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde', FILE_BYTES / 64]);
  });

  test("a run's logs from before the database held them are imported from this coordinator's disk on first read", async () => {
    const run = await runToEnd('legacy', 'old-1');
    const stdout = (run.nodes as Array<{ stdout: string }>)[0]?.stdout ?? '';
    assert.ok(existsSync(stdout), `the engine wrote ${stdout}`);
    // As a run recorded before this change: its files, but nothing in the database.
    await flaky.db.query('DELETE FROM run_log_streams WHERE run_id = (SELECT id FROM runs WHERE dag_run_id = $1)', ['old-1']);
    const tail = (await t.call('GET', '/dag-runs/legacy/old-1/steps/count/log?tail=2')).json;
    assert.deepEqual([tail.content, tail.totalLines], ['19999\n20000', 20_000]);
    const runLog = (await t.call('GET', '/dag-runs/legacy/old-1/log')).json as { totalLines: number };
    assert.ok(runLog.totalLines > 0, 'the run log is imported too');
    const stored = await flaky.db.query<{ size: string }>("SELECT size::text AS size FROM run_log_streams WHERE run_id = (SELECT id FROM runs WHERE dag_run_id = $1) AND stream LIKE '%.out'", ['old-1']);
    assert.equal(Number(stored[0]?.size), Buffer.byteLength(Array.from({ length: 20_000 }, (_, i) => `${i + 1}\n`).join('')));
    // Served from the database from now on: the file is no longer needed.
    rmSync(stdout);
    const middle = (await t.call('GET', '/dag-runs/legacy/old-1/steps/count/log?offset=10000&limit=2')).json;
    assert.equal(middle.content, '10000\n10001');
  });

  test("a followed log's event id names its attempt: resumed after a retry, the new attempt's log comes from its start", async () => {
    const first = await runToEnd('again', 'retry-1');
    const before = logEvents(await readEvents(`${t.coordinator.apiUrl}/events/dag-runs/again/retry-1/steps/say/log`));
    assert.deepEqual(before.map((e) => [e.id, e.content]), [[`${String(first.attemptId)}:12`, 'hello again\n']]);
    assert.equal((await t.call('POST', '/dag-runs/again/retry-1/retry', {})).status, 200);
    const retried = await t.waitForRunStatus('again', 'retry-1', [4], 20_000);
    assert.notEqual(retried.attemptId, first.attemptId);
    const url = `${t.coordinator.apiUrl}/events/dag-runs/again/retry-1/steps/say/log`;
    // The first attempt's position means nothing in the second's log: sent from its start.
    const resumed = logEvents(await readEvents(url, { 'last-event-id': before[0]?.id ?? '' }));
    assert.deepEqual(resumed.map((e) => [e.id, e.content]), [[`${String(retried.attemptId)}:12`, 'hello again\n']]);
    // The same attempt's position resumes after it; a bare offset names no attempt: from the start.
    const caughtUp = await readEvents(url, { 'last-event-id': `${String(retried.attemptId)}:12` });
    assert.deepEqual(caughtUp.map((e) => e.event), ['end']);
    assert.deepEqual(logEvents(await readEvents(url, { 'last-event-id': '12' })).map((e) => e.content), ['hello again\n']);
    const bad = await fetch(url, { headers: { 'last-event-id': 'x:y' } });
    assert.equal(bad.status, 400);
  });
});
