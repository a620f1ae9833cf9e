import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RunStatus } from '@trellis/core';
import {
  appendLogChunks, appendOwnLogChunks, getNodes, getRun, insertRun, logBytes, logLineStart, logTail, MAX_LOG_PIECE, purgeHistory, updateRunStatus,
  type Db, type LogStreamRef, type Queryable, type NodeRow, type OwnLogStreams, type RunRecord, type SnapshotWrite,
} from '@trellis/store';
import { openTestDb } from '@trellis/store/testing';

let db: Db;
let second: (() => Promise<Db>) | undefined;
let cleanup: () => Promise<void>;

before(async () => {
  ({ db, cleanup, second } = await openTestDb('run_logs'));
});
after(async () => cleanup());

async function newRun(dagRunId: string): Promise<RunRecord> {
  return insertRun(db, {
    dagName: 'logs', dagRunId, fileName: 'logs', attemptId: 'a1', status: RunStatus.Running, params: '[]', queueName: 'logs',
    logFile: `/var/log/logs/${dagRunId}.1/run.log`, specYaml: 'steps: [echo]', labels: [], trigger: 'manual',
    triggeredBy: { kind: 'anonymous', id: 'anonymous', name: 'anonymous' }, noReuse: false,
  });
}

/** The stored pieces of a stream, in order, checked to be contiguous. */
async function pieces(ref: LogStreamRef): Promise<Array<{ offset: number; data: Buffer }>> {
  const rows = await db.query<{ offset: string; data: Uint8Array }>(
    'SELECT byte_offset::text AS offset, data FROM run_log_chunks WHERE run_id = $1 AND attempt_id = $2 AND stream = $3 ORDER BY byte_offset',
    [ref.runId, ref.attemptId, ref.stream],
  );
  let expected = 0;
  return rows.map((r) => {
    assert.equal(Number(r.offset), expected, 'pieces are contiguous');
    expected += r.data.length;
    return { offset: Number(r.offset), data: Buffer.from(r.data) };
  });
}

/**
 * Whether some session comes to wait for a lock held by session `blocker` (its uncommitted
 * write) before `stop` holds; polled. Only waits on that session count: test files running beside
 * this one share the database.
 */
async function lockWaitSeen(blocker: number, stop: () => boolean = () => false): Promise<boolean> {
  const deadline = Date.now() + 10_000;
  const waiting = async (): Promise<boolean> =>
    (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))', [blocker]))[0]?.n !== 0;
  while (!stop()) {
    if (await waiting()) return true;
    if (Date.now() > deadline) throw new Error('no session waited for a lock within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return false;
}

/** The server process of the session `tx` runs on. */
async function backendOf(tx: Queryable): Promise<number> {
  const [row] = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  if (row === undefined) throw new Error('no backend pid');
  return row.pid;
}

async function storedText(ref: LogStreamRef): Promise<string> {
  return Buffer.concat((await pieces(ref)).map((p) => p.data)).toString('utf8');
}

describe('run logs in the database', () => {
  test('resends and overlaps keep one copy of each byte; a gap is refused, never stored', async () => {
    const run = await newRun('dedupe');
    const ref = { runId: run.id, attemptId: 'a1', stream: 'step.out' };
    const text = 'one\ntwo\nthree\nfour\n';
    assert.equal((await appendLogChunks(db, run.id, 'a1', [{ stream: 'step.out', offset: 0, data: Buffer.from(text.slice(0, 6)) }])).stored, 6);
    // The same chunk again (a worker's resend after a lost answer), then one overlapping it.
    assert.equal((await appendLogChunks(db, run.id, 'a1', [{ stream: 'step.out', offset: 0, data: Buffer.from(text.slice(0, 6)) }])).stored, 0);
    assert.equal((await appendLogChunks(db, run.id, 'a1', [{ stream: 'step.out', offset: 4, data: Buffer.from(text.slice(4, 12)) }])).stored, 6);
    const gap = await appendLogChunks(db, run.id, 'a1', [{ stream: 'step.out', offset: 14, data: Buffer.from(text.slice(14)) }]);
    assert.deepEqual([gap.stored, gap.refused, gap.ends.get('step.out')], [0, [{ stream: 'step.out', offset: 14, expected: 12 }], { size: 12, newlines: 2, endsWithNewline: false }]);
    await appendLogChunks(db, run.id, 'a1', [{ stream: 'step.out', offset: 12, data: Buffer.from(text.slice(12)) }]);
    assert.equal(await storedText(ref), text);
    assert.deepEqual(await logTail(db, ref, 5), { info: { size: text.length, newlines: 4, endsWithNewline: true }, bytes: Buffer.from('four\n') });
    // Streams and attempts are apart: another attempt's log of the same name starts empty.
    assert.equal(await logTail(db, { ...ref, attemptId: 'a2' }, 5), undefined);
  });

  test('large chunks are stored in bounded pieces with a line index that finds any line', async () => {
    const run = await newRun('pieces');
    const ref = { runId: run.id, attemptId: 'a1', stream: 'run.log' };
    const lines = Array.from({ length: 60_000 }, (_, i) => `line ${i} ${'x'.repeat(i % 40)}`);
    const data = Buffer.from(lines.join('\n'));
    // Odd chunk sizes, so lines span chunks and pieces.
    const chunks = [];
    for (let at = 0, size = 700_001; at < data.length; at += size, size = 333_333) chunks.push({ stream: 'run.log', offset: at, data: data.subarray(at, at + size) });
    await appendLogChunks(db, run.id, 'a1', chunks);
    const stored = await pieces(ref);
    assert.ok(stored.every((p) => p.data.length <= MAX_LOG_PIECE));
    assert.equal(Buffer.concat(stored.map((p) => p.data)).toString(), lines.join('\n'));
    const info = { size: data.length, newlines: 59_999, endsWithNewline: false };
    assert.deepEqual(await logTail(db, ref, 100_000), { info, bytes: data.subarray(data.length - 100_000) });
    for (const line of [0, 1, 12_345, 59_999]) {
      const at = await logLineStart(db, ref, line);
      assert.ok(at !== undefined);
      assert.deepEqual(at.info, info);
      const start = line === 0 ? 0 : nthNewline(data, line) + 1;
      const holding = stored.find((p) => p.offset <= start && start <= p.offset + p.data.length);
      assert.ok(holding !== undefined && at.offset <= start && start - at.offset <= MAX_LOG_PIECE, `line ${line}`);
      assert.equal(at.linesBefore, countNewlines(data.subarray(0, at.offset)));
    }
    // Any byte range, across pieces, and past the end (only what is stored).
    for (const [from, to] of [[0, 10], [MAX_LOG_PIECE - 5, MAX_LOG_PIECE + 5], [1_000_000, 1_300_000], [data.length - 3, data.length + 100]] as const) {
      assert.deepEqual(await logBytes(db, ref, from, to), data.subarray(from, Math.min(to, data.length)), `bytes ${from}-${to}`);
    }
  });

  test('a log is bytes: every byte value reads back as written, by tail and by range, across pieces', async () => {
    const run = await newRun('bytes');
    const ref = { runId: run.id, attemptId: 'a1', stream: 'step.err' };
    // Every byte value over and over (NULs, lone UTF-8 continuation bytes, 0xff), 200 KiB of it.
    const data = Buffer.from(Array.from({ length: 200 * 1024 }, (_, i) => (i * 7) % 256));
    await appendLogChunks(db, run.id, 'a1', [{ stream: 'step.err', offset: 0, data }]);
    const tail = await logTail(db, ref, 70_000);
    assert.ok(tail !== undefined);
    assert.ok(tail.bytes.equals(data.subarray(data.length - 70_000)), 'tail');
    for (const [from, to] of [[0, 1], [MAX_LOG_PIECE - 3, MAX_LOG_PIECE + 3], [1_000, 150_000], [data.length - 10, data.length]] as const) {
      assert.ok((await logBytes(db, ref, from, to)).equals(data.subarray(from, to)), `bytes ${from}-${to}`);
    }
  });

  test('two sessions storing the same resend at once keep one copy', async () => {
    // On PostgreSQL a second pool (another coordinator); PGlite has one session, which serialises them.
    const other = second !== undefined ? await second() : db;
    const run = await newRun('race');
    const data = Buffer.from('a\nb\nc\n'.repeat(50_000));
    const chunk = { stream: 'run.log', offset: 0, data };
    const results = await Promise.all([appendLogChunks(db, run.id, 'a1', [chunk]), appendLogChunks(other, run.id, 'a1', [chunk])]);
    assert.deepEqual(results.map((r) => r.stored).sort(), [0, data.length]);
    assert.equal(await storedText({ runId: run.id, attemptId: 'a1', stream: 'run.log' }), data.toString());
  });

  test('two coordinators storing the same resend by the one-statement path: one stores it, the other stores nothing and is told so', async () => {
    const other = second !== undefined ? await second() : db;
    const run = await newRun('own-race');
    const chunk = { stream: 'step.out', offset: 0, data: Buffer.from('x\ny\n'.repeat(10_000)) };
    let racing: ReturnType<typeof appendOwnLogChunks> | undefined;
    await other.transaction(async (tx) => {
      assert.equal((await appendOwnLogChunks(tx, run.id, 'a1', [chunk], new Map())).logsStored, true);
      // Both found the stream empty; on PostgreSQL this one waits for the first to commit, then
      // fails on the chunk's key (PGlite's one session runs it after the commit: the stream no longer ends at 0).
      racing = appendOwnLogChunks(db, run.id, 'a1', [chunk], new Map());
      if (second !== undefined) assert.ok(await lockWaitSeen(await backendOf(tx)));
    });
    assert.deepEqual(await racing, { logsStored: false, moved: false });
    assert.equal((await appendLogChunks(db, run.id, 'a1', [chunk])).stored, 0);
    assert.equal(await storedText({ runId: run.id, attemptId: 'a1', stream: 'step.out' }), chunk.data.toString());
  });

  test('a stream given only an empty chunk by the one-statement path is left as another writer stores it meanwhile', async () => {
    const other = second !== undefined ? await second() : db;
    const run = await newRun('own-empty');
    const err = { stream: 'step.err', offset: 0, data: Buffer.from('oops\n') };
    const out = { stream: 'step.out', offset: 0, data: Buffer.from('fine\n') };
    let own: ReturnType<typeof appendOwnLogChunks> | undefined;
    await other.transaction(async (tx) => {
      assert.equal((await appendOwnLogChunks(tx, run.id, 'a1', [err], new Map())).logsStored, true);
      // This writer saw step.err empty too and has nothing new for it: on PostgreSQL it must
      // neither wait for nor overwrite the other's uncommitted size (PGlite runs it after the commit).
      let done = false;
      own = appendOwnLogChunks(db, run.id, 'a1', [out, { ...err, data: Buffer.alloc(0) }], new Map()).finally(() => (done = true));
      if (second !== undefined) assert.equal(await lockWaitSeen(await backendOf(tx), () => done), false);
    });
    assert.equal((await own)?.logsStored, true);
    assert.deepEqual((await logTail(db, { runId: run.id, attemptId: 'a1', stream: 'step.err' }, 100))?.bytes, err.data);
    assert.deepEqual((await logTail(db, { runId: run.id, attemptId: 'a1', stream: 'step.out' }, 100))?.bytes, out.data);
  });

  test("a single writer's chunks go in one statement, which stores nothing when a stream does not end where the writer thinks", async () => {
    const run = await newRun('own');
    const ref = { runId: run.id, attemptId: 'a1', stream: 'run.log' };
    const known: OwnLogStreams = new Map();
    assert.equal((await appendOwnLogChunks(db, run.id, 'a1', [{ stream: 'run.log', offset: 0, data: Buffer.from('start\n') }, { stream: 's.out', offset: 0, data: Buffer.from('x'.repeat(MAX_LOG_PIECE + 10)) }], known)).logsStored, true);
    assert.equal((await appendOwnLogChunks(db, run.id, 'a1', [{ stream: 'run.log', offset: 6, data: Buffer.from('end') }], known)).logsStored, true);
    assert.deepEqual(known.get('run.log'), { size: 9, newlines: 1, endsWithNewline: false });
    assert.equal(await storedText(ref), 'start\nend');
    assert.equal((await pieces({ ...ref, stream: 's.out' })).length, 2);
    // Another write it did not make (or a stale idea of the end): nothing stored, and it says so.
    await appendLogChunks(db, run.id, 'a1', [{ stream: 'run.log', offset: 9, data: Buffer.from('!\n') }]);
    assert.equal((await appendOwnLogChunks(db, run.id, 'a1', [{ stream: 'run.log', offset: 9, data: Buffer.from('late\n') }], known)).logsStored, false);
    assert.equal((await appendOwnLogChunks(db, run.id, 'a1', [{ stream: 'run.log', offset: 20, data: Buffer.from('gap\n') }], known)).logsStored, false);
    assert.equal(await storedText(ref), 'start\nend!\n');
    assert.deepEqual((await logTail(db, ref, 4))?.info, { size: 11, newlines: 2, endsWithNewline: true });
  });

  test('a snapshot written with its logs moves the run only when the logs are stored', async () => {
    const run = await newRun('own-status');
    const ref = { runId: run.id, attemptId: 'a1', stream: 'run.log' };
    const known: OwnLogStreams = new Map();
    const node = (status: number): NodeRow => ({ kind: 'step', position: 0, stepName: 's', data: { status } });
    const write = (next: RunStatus, status: number): SnapshotWrite => ({ runId: run.id, attemptId: 'a1', expected: [RunStatus.Running], next, nodes: [node(status)] });
    assert.deepEqual(await appendOwnLogChunks(db, run.id, 'a1', [{ stream: 'run.log', offset: 0, data: Buffer.from('start\n') }], known, write(RunStatus.Running, 1)), { logsStored: true, moved: true });
    assert.deepEqual((await getNodes(db, run.id)).map((n) => n.data), [{ status: 1 }]);
    // The stored end is not where this writer thinks: neither the chunk nor the status is written.
    await appendLogChunks(db, run.id, 'a1', [{ stream: 'run.log', offset: 6, data: Buffer.from('other\n') }]);
    assert.deepEqual(await appendOwnLogChunks(db, run.id, 'a1', [{ stream: 'run.log', offset: 6, data: Buffer.from('end\n') }], known, { ...write(RunStatus.Success, 4), finishedAt: new Date() }), { logsStored: false, moved: false });
    assert.equal((await getRun(db, 'logs', 'own-status'))?.status, RunStatus.Running);
    assert.deepEqual((await getNodes(db, run.id)).map((n) => n.data), [{ status: 1 }]);
    assert.equal(await storedText(ref), 'start\nother\n');
    // A status alone (no chunks) is a plain snapshot write; a stale one does not move the run.
    assert.deepEqual(await appendOwnLogChunks(db, run.id, 'a1', [], known, { ...write(RunStatus.Success, 4), finishedAt: new Date() }), { logsStored: true, moved: true });
    assert.equal((await getRun(db, 'logs', 'own-status'))?.status, RunStatus.Success);
    assert.deepEqual(await appendOwnLogChunks(db, run.id, 'a1', [], known, write(RunStatus.Running, 1)), { logsStored: true, moved: false });
    assert.deepEqual((await getNodes(db, run.id)).map((n) => n.data), [{ status: 4 }]);
  });

  test('retention removes a run with its stored logs', async () => {
    const run = await newRun('old');
    await appendLogChunks(db, run.id, 'a1', [{ stream: 'run.log', offset: 0, data: Buffer.from('bye\n') }]);
    await updateRunStatus(db, { runId: run.id, attemptId: 'a1', expected: [RunStatus.Running], next: RunStatus.Success, finishedAt: new Date() });
    await db.query(`UPDATE runs SET created_at = now() - interval '40 days' WHERE id = $1`, [run.id]);
    await purgeHistory(db, 'logs', 30, new Date());
    const left = await db.query<{ n: number }>('SELECT (SELECT count(*) FROM run_log_chunks WHERE run_id = $1)::int + (SELECT count(*) FROM run_log_streams WHERE run_id = $1)::int AS n', [run.id]);
    assert.equal(left[0]?.n, 0);
  });
});

function nthNewline(data: Buffer, n: number): number {
  let at = -1;
  for (let i = 0; i < n; i += 1) at = data.indexOf(0x0a, at + 1);
  return at;
}

function countNewlines(data: Buffer): number {
  let count = 0;
  for (let at = data.indexOf(0x0a); at !== -1; at = data.indexOf(0x0a, at + 1)) count += 1;
  return count;
}
