import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_LINE_BYTES, MAX_PAGE_BYTES, TRUNCATED_LINE_MARKER, readLogPage } from '@trellis/coordinator';

let dir: string;
const lines = Array.from({ length: 25_000 }, (_, i) => `line ${i + 1} ${'x'.repeat(i % 50)}`);

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-pager-'));
  writeFileSync(join(dir, 'with-newline.log'), lines.join('\n') + '\n');
  writeFileSync(join(dir, 'no-newline.log'), lines.join('\n'));
  writeFileSync(join(dir, 'empty.log'), '');
  writeFileSync(join(dir, 'long.log'), `short\n${'é'.repeat(100_000)}\nend\n`);
  // A 6 MB line between short ones, then 12 lines of 200 KB: no page may hold them whole.
  writeFileSync(join(dir, 'huge-line.log'), `first\n${'€'.repeat(2_000_000)}\nafter\n${Array.from({ length: 12 }, (_, i) => `${i}`.padEnd(200_000, 'z')).join('\n')}\n`);
});

after(() => rmSync(dir, { recursive: true, force: true }));

describe('log pages', () => {
  for (const name of ['with-newline.log', 'no-newline.log']) {
    test(`${name}: head, tail and ranges with exact totals`, async () => {
      const file = join(dir, name);
      const head = await readLogPage(file, { kind: 'head', lines: 3 });
      assert.deepEqual(head, { content: lines.slice(0, 3).join('\n'), lineCount: 3, totalLines: 25_000, hasMore: true, isEstimate: false });
      const tail = await readLogPage(file, { kind: 'tail', lines: 4 });
      assert.equal(tail.content, lines.slice(-4).join('\n'));
      assert.equal(tail.lineCount, 4);
      assert.equal(tail.hasMore, true);
      const range = await readLogPage(file, { kind: 'range', offset: 12_345, limit: 2 });
      assert.equal(range.content, lines.slice(12_344, 12_346).join('\n'));
      assert.equal(range.hasMore, true);
      const end = await readLogPage(file, { kind: 'range', offset: 24_999, limit: 10 });
      assert.equal(end.content, lines.slice(24_998).join('\n'));
      assert.equal(end.lineCount, 2);
      assert.equal(end.hasMore, false);
      const all = await readLogPage(file, { kind: 'tail', lines: 30_000 });
      assert.equal(all.lineCount, 25_000);
      assert.equal(all.hasMore, false);
    });
  }

  test('past the end, empty and missing files give empty pages', async () => {
    const past = await readLogPage(join(dir, 'with-newline.log'), { kind: 'range', offset: 30_000, limit: 5 });
    assert.equal(past.lineCount, 0);
    assert.equal(past.hasMore, false);
    assert.deepEqual(await readLogPage(join(dir, 'empty.log'), { kind: 'tail', lines: 5 }), { content: '', lineCount: 0, totalLines: 0, hasMore: false, isEstimate: false });
    assert.equal((await readLogPage(join(dir, 'missing.log'), { kind: 'head', lines: 5 })).lineCount, 0);
  });

  test('a line longer than a read chunk, with multi-byte characters, stays whole', async () => {
    const page = await readLogPage(join(dir, 'long.log'), { kind: 'range', offset: 2, limit: 1 });
    assert.equal(page.content, 'é'.repeat(100_000));
    const tail = await readLogPage(join(dir, 'long.log'), { kind: 'tail', lines: 2 });
    assert.equal(tail.content, `${'é'.repeat(100_000)}\nend`);
  });

  test('files over 32 MiB get an estimated total instead of a full scan', async () => {
    const big = join(dir, 'big.log');
    const row = `${'y'.repeat(99)}\n`;
    writeFileSync(big, row.repeat(400_000));
    const page = await readLogPage(big, { kind: 'tail', lines: 2 });
    assert.equal(page.isEstimate, true);
    assert.ok(Math.abs(page.totalLines - 400_000) < 4_000, `estimate ${page.totalLines}`);
    assert.equal(page.content, `${'y'.repeat(99)}\n${'y'.repeat(99)}`);
  });

  test('a line longer than MAX_LINE_BYTES is cut at a character boundary and marked; hasMore says so', async () => {
    const file = join(dir, 'huge-line.log');
    const cutLine = `${'€'.repeat(Math.floor(MAX_LINE_BYTES / 3))} ${TRUNCATED_LINE_MARKER}`;
    const range = await readLogPage(file, { kind: 'range', offset: 2, limit: 1 });
    assert.equal(range.content, cutLine);
    assert.equal(range.hasMore, true);
    const around = await readLogPage(file, { kind: 'head', lines: 3 });
    assert.equal(around.content, `first\n${cutLine}\nafter`);
    assert.equal(around.lineCount, 3);
    const two = await readLogPage(file, { kind: 'range', offset: 1, limit: 2 });
    assert.equal(two.content, `first\n${cutLine}`);
    assert.equal(two.hasMore, true);
    // Read backwards, a cut line keeps its end, the marker first.
    const lastBytes = `${TRUNCATED_LINE_MARKER} ${'€'.repeat(Math.floor(MAX_LINE_BYTES / 3))}`;
    writeFileSync(join(dir, 'huge-last.log'), `first\n${'€'.repeat(2_000_000)}\nend\n`);
    const tail = await readLogPage(join(dir, 'huge-last.log'), { kind: 'tail', lines: 3 });
    assert.equal(tail.content, `first\n${lastBytes}\nend`);
    assert.equal(tail.hasMore, true);
    const tailTwo = await readLogPage(join(dir, 'huge-last.log'), { kind: 'tail', lines: 2 });
    assert.equal(tailTwo.content, `${lastBytes}\nend`);
  });

  test('a page holds at most MAX_PAGE_BYTES: it ends early with hasMore, and the next offset goes on', async () => {
    const file = join(dir, 'huge-line.log');
    const page = await readLogPage(file, { kind: 'range', offset: 4, limit: 10 });
    assert.ok(Buffer.byteLength(page.content) <= MAX_PAGE_BYTES, `page of ${Buffer.byteLength(page.content)} bytes`);
    assert.equal(page.lineCount, Math.floor(MAX_PAGE_BYTES / 200_000));
    assert.equal(page.hasMore, true);
    const next = await readLogPage(file, { kind: 'range', offset: 4 + page.lineCount, limit: 10 });
    assert.equal(next.content.split('\n')[0], `${page.lineCount}`.padEnd(200_000, 'z'));
    const tail = await readLogPage(file, { kind: 'tail', lines: 12 });
    assert.equal(tail.lineCount, Math.floor(MAX_PAGE_BYTES / 200_000));
    assert.equal(tail.content.split('\n').at(-1), '11'.padEnd(200_000, 'z'));
    assert.equal(tail.hasMore, true);
  });
});
