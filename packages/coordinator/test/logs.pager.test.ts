import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RunStatus } from '@trellis/core';
import { MAX_LINE_BYTES, MAX_PAGE_BYTES, TRUNCATED_LINE_MARKER, readEndedTail, readLogPage, tailStart, type LogWindow } from '@trellis/coordinator';
import { appendLogChunks, logBytes, insertRun, requeueForRetry, updateRunStatus, type Db } from '@trellis/store';
import { openTestDb } from '@trellis/store/testing';

let db: Db;
let cleanup: () => Promise<void>;
let runId: number;
const lines = Array.from({ length: 25_000 }, (_, i) => `line ${i + 1} ${'x'.repeat(i % 50)}`);

/** Stores `text` as the stream `name` in chunks of an odd size, so lines span chunks and pieces. */
async function store(name: string, text: string, chunkBytes = 100_003): Promise<void> {
  const data = Buffer.from(text);
  const chunks = [];
  for (let at = 0; at < data.length; at += chunkBytes) chunks.push({ stream: name, offset: at, data: data.subarray(at, at + chunkBytes) });
  await appendLogChunks(db, runId, 'a1', chunks);
}

const readLog = (name: string, window: LogWindow) => readLogPage(db, { runId, attemptId: 'a1', stream: name }, window);

before(async () => {
  ({ db, cleanup } = await openTestDb('logs_pager'));
  const run = await insertRun(db, {
    dagName: 'pager', dagRunId: 'r1', fileName: 'pager', attemptId: 'a1', status: RunStatus.Running, params: '[]', queueName: 'pager',
    logFile: '/logs/pager/r1.1/run.log', specYaml: 'steps: [echo]', labels: [], trigger: 'manual', triggeredBy: { kind: 'anonymous', id: 'anonymous', name: 'anonymous' }, noReuse: false,
  });
  runId = run.id;
  await store('with-newline.log', lines.join('\n') + '\n');
  await store('no-newline.log', lines.join('\n'));
  await store('empty.log', '');
  await store('long.log', `short\n${'é'.repeat(100_000)}\nend\n`);
  // A 6 MB line between short ones, then 12 lines of 200 KB: no page may hold them whole.
  // A progress bar that never printed a newline, longer than a page.
  await store('progress.log', `start\n${'€'.repeat(500_000)}`, 1_000_000);
  await store('huge-line.log', `first\n${'€'.repeat(2_000_000)}\nafter\n${Array.from({ length: 12 }, (_, i) => `${i}`.padEnd(200_000, 'z')).join('\n')}\n`, 1_000_000);
});

after(async () => cleanup());

describe('log pages', () => {
  for (const name of ['with-newline.log', 'no-newline.log']) {
    test(`${name}: head, tail and ranges with exact totals`, async () => {
      const head = await readLog(name, { kind: 'head', lines: 3 });
      assert.deepEqual(head, { content: lines.slice(0, 3).join('\n'), lineCount: 3, totalLines: 25_000, hasMore: true, isEstimate: false });
      const tail = await readLog(name, { kind: 'tail', lines: 4 });
      assert.equal(tail.content, lines.slice(-4).join('\n'));
      assert.equal(tail.lineCount, 4);
      assert.equal(tail.hasMore, true);
      const range = await readLog(name, { kind: 'range', offset: 12_345, limit: 2 });
      assert.equal(range.content, lines.slice(12_344, 12_346).join('\n'));
      assert.equal(range.hasMore, true);
      const end = await readLog(name, { kind: 'range', offset: 24_999, limit: 10 });
      assert.equal(end.content, lines.slice(24_998).join('\n'));
      assert.equal(end.lineCount, 2);
      assert.equal(end.hasMore, false);
      const all = await readLog(name, { kind: 'tail', lines: 30_000 });
      assert.equal(all.lineCount, 25_000);
      assert.equal(all.hasMore, false);
    });
  }

  test('past the end, empty and missing files give empty pages', async () => {
    const past = await readLog('with-newline.log', { kind: 'range', offset: 30_000, limit: 5 });
    assert.equal(past.lineCount, 0);
    assert.equal(past.hasMore, false);
    assert.deepEqual(await readLog('empty.log', { kind: 'tail', lines: 5 }), { content: '', lineCount: 0, totalLines: 0, hasMore: false, isEstimate: false });
    assert.equal((await readLog('missing.log', { kind: 'head', lines: 5 })).lineCount, 0);
  });

  test('a line longer than a read chunk, with multi-byte characters, stays whole', async () => {
    const page = await readLog('long.log', { kind: 'range', offset: 2, limit: 1 });
    assert.equal(page.content, 'é'.repeat(100_000));
    const tail = await readLog('long.log', { kind: 'tail', lines: 2 });
    assert.equal(tail.content, `${'é'.repeat(100_000)}\nend`);
  });

  test('a 40 MB log: exact totals, and pages from its end, middle and start', async () => {
    const row = `${'y'.repeat(99)}\n`;
    await store('big.log', row.repeat(400_000), 1 << 20);
    const page = await readLog('big.log', { kind: 'tail', lines: 2 });
    assert.deepEqual(page, { content: `${'y'.repeat(99)}\n${'y'.repeat(99)}`, lineCount: 2, totalLines: 400_000, hasMore: true, isEstimate: false });
    const middle = await readLog('big.log', { kind: 'range', offset: 234_567, limit: 3 });
    assert.equal(middle.content, `${'y'.repeat(99)}\n`.repeat(3).slice(0, -1));
    assert.equal(middle.totalLines, 400_000);
    assert.equal((await readLog('big.log', { kind: 'head', lines: 1 })).content, 'y'.repeat(99));
    assert.equal((await readLog('big.log', { kind: 'range', offset: 400_000, limit: 3 })).hasMore, false);
  });

  test('a line longer than MAX_LINE_BYTES is cut at a character boundary and marked; hasMore says so', async () => {
    const file = 'huge-line.log';
    const cutLine = `${'€'.repeat(Math.floor(MAX_LINE_BYTES / 3))} ${TRUNCATED_LINE_MARKER}`;
    const range = await readLog(file, { kind: 'range', offset: 2, limit: 1 });
    assert.equal(range.content, cutLine);
    assert.equal(range.hasMore, true);
    const around = await readLog(file, { kind: 'head', lines: 3 });
    assert.equal(around.content, `first\n${cutLine}\nafter`);
    assert.equal(around.lineCount, 3);
    const two = await readLog(file, { kind: 'range', offset: 1, limit: 2 });
    assert.equal(two.content, `first\n${cutLine}`);
    assert.equal(two.hasMore, true);
    // Read backwards, a cut line keeps its end, the marker first.
    const lastBytes = `${TRUNCATED_LINE_MARKER} ${'€'.repeat(Math.floor(MAX_LINE_BYTES / 3))}`;
    await store('huge-last.log', `first\n${'€'.repeat(2_000_000)}\nend\n`);
    const tail = await readLog('huge-last.log', { kind: 'tail', lines: 3 });
    assert.equal(tail.content, `first\n${lastBytes}\nend`);
    assert.equal(tail.hasMore, true);
    const tailTwo = await readLog('huge-last.log', { kind: 'tail', lines: 2 });
    assert.equal(tailTwo.content, `${lastBytes}\nend`);
  });

  test('a page holds at most MAX_PAGE_BYTES: it ends early with hasMore, and the next offset goes on', async () => {
    const file = 'huge-line.log';
    const page = await readLog(file, { kind: 'range', offset: 4, limit: 10 });
    assert.ok(Buffer.byteLength(page.content) <= MAX_PAGE_BYTES, `page of ${Buffer.byteLength(page.content)} bytes`);
    assert.equal(page.lineCount, Math.floor(MAX_PAGE_BYTES / 200_000));
    assert.equal(page.hasMore, true);
    const next = await readLog(file, { kind: 'range', offset: 4 + page.lineCount, limit: 10 });
    assert.equal(next.content.split('\n')[0], `${page.lineCount}`.padEnd(200_000, 'z'));
    const tail = await readLog(file, { kind: 'tail', lines: 12 });
    assert.equal(tail.lineCount, Math.floor(MAX_PAGE_BYTES / 200_000));
    assert.equal(tail.content.split('\n').at(-1), '11'.padEnd(200_000, 'z'));
    assert.equal(tail.hasMore, true);
  });

  test("where a log's last N lines start (a followed log's tail): each line whole, with or without a final newline", async () => {
    const fromTail = async (name: string, count: number) => {
      const ref = { runId, attemptId: 'a1', stream: name };
      const start = await tailStart(db, ref, count);
      return (await logBytes(db, ref, start, Number.MAX_SAFE_INTEGER)).toString('utf8');
    };
    for (const count of [1, 5, 12_345, 24_999]) {
      assert.equal(await fromTail('with-newline.log', count), `${lines.slice(-count).join('\n')}\n`, `last ${count} of with-newline.log`);
      assert.equal(await fromTail('no-newline.log', count), lines.slice(-count).join('\n'), `last ${count} of no-newline.log`);
    }
    assert.equal(await fromTail('with-newline.log', 25_000), `${lines.join('\n')}\n`);
    assert.equal(await fromTail('no-newline.log', 30_000), lines.join('\n'));
    assert.equal(await fromTail('long.log', 2), `${'é'.repeat(100_000)}\nend\n`);
    assert.equal(await fromTail('empty.log', 5), '');
    assert.equal(await fromTail('missing.log', 5), '');
  });

  test('a followed tail holds at most MAX_PAGE_BYTES: from the first whole line, or whole character, of the last ones', async () => {
    const fromTail = async (name: string, count: number) => {
      const ref = { runId, attemptId: 'a1', stream: name };
      return (await logBytes(db, ref, await tailStart(db, ref, count), Number.MAX_SAFE_INTEGER)).toString('utf8');
    };
    const long = Array.from({ length: 12 }, (_, i) => `${i}`.padEnd(200_000, 'z'));
    assert.equal(await fromTail('huge-line.log', 3), `${long.slice(-3).join('\n')}\n`, 'under the bound: the lines asked for');
    const fitting = Math.floor(MAX_PAGE_BYTES / 200_001);
    assert.equal(await fromTail('huge-line.log', 12), `${long.slice(-fitting).join('\n')}\n`, 'over it: the whole lines of the last MAX_PAGE_BYTES');
    const bar = await fromTail('progress.log', 1);
    assert.match(bar, /^€+$/, 'a line longer than the bound starts at a whole character');
    assert.ok(Buffer.byteLength(bar) <= MAX_PAGE_BYTES && Buffer.byteLength(bar) > MAX_PAGE_BYTES - 3, `${Buffer.byteLength(bar)} bytes`);
  });

  // Last: it ends the run and retries it.
  test('the one-statement tail of an ended run: only while the run has ended on that attempt', async () => {
    const ref = { runId, attemptId: 'a1', stream: 'with-newline.log' };
    assert.equal(await readEndedTail(db, ref, 100), undefined, 'running: not ended yet');
    await updateRunStatus(db, { runId, attemptId: 'a1', expected: [RunStatus.Running], next: RunStatus.Success, finishedAt: new Date() });
    assert.deepEqual(await readEndedTail(db, ref, 100), await readLog('with-newline.log', { kind: 'tail', lines: 100 }));
    assert.equal(await readEndedTail(db, { ...ref, stream: 'nothing-stored.log' }, 100), undefined);
    await requeueForRetry(db, runId, { attemptId: 'a2', logFile: '/logs/pager/r1.2/run.log', triggeredBy: { kind: 'anonymous', id: 'anonymous', name: 'anonymous' } });
    assert.equal(await readEndedTail(db, ref, 100), undefined, 'retried: a1 is no longer the current attempt');
  });
});
