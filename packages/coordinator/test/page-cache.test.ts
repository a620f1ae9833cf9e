// The list answers' cache: a page read again is the same bytes while its parts are the same,
// written again when one changed, and the cache keeps to its byte budget.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PageCache, type ListPage } from '../src/http/page-cache.js';

/** A page whose text counts how often it was written. */
function page(parts: unknown[], text: string, written: { count: number }): ListPage {
  return { parts, text: () => ((written.count += 1), text) };
}

describe('PageCache', () => {
  test('the same parts give the bytes written before; a changed part writes the page again', () => {
    const cache = new PageCache();
    const written = { count: 0 };
    const entry = { name: 'a' };
    const first = cache.body('k', page([entry, 'x', 1, true, undefined], '{"v":1}', written));
    assert.equal(first.toString(), '{"v":1}');
    // Equal strings made apart are the same part: a summary rebuilt to the same text is no change.
    const again = cache.body('k', page([entry, ['x'].join(''), 1, true, undefined], '{"v":2}', written));
    assert.equal(again, first, 'the very same bytes');
    assert.equal(written.count, 1, 'not written again');
    assert.equal(cache.body('k', page([{ name: 'a' }, 'x', 1, true, undefined], '{"v":3}', written)).toString(), '{"v":3}', 'an object replaced is a change');
    assert.equal(cache.body('k', page([{ name: 'a' }, 'x', 1, true], '{"v":4}', written)).toString(), '{"v":4}', 'so is a part fewer');
    assert.equal(cache.body('other', page([{ name: 'a' }, 'x', 1, true], '{"v":5}', written)).toString(), '{"v":5}', 'another request, another page');
    assert.equal(written.count, 4);
  });

  test('past its budget or its page count the least recently read pages are forgotten', () => {
    // A 6-byte body under a 1-character key counts 6 + 2 + 512 bytes: two fit in 1,100, three do not.
    const cache = new PageCache(1100);
    const written = { count: 0 };
    const read = (key: string): string => cache.body(key, page([1], `"${key.repeat(4)}"`, written)).toString();
    read('a');
    read('b');
    assert.deepEqual([cache.pageCount, cache.size], [2, 1040]);
    read('c');
    assert.deepEqual([cache.pageCount, cache.size, written.count], [2, 1040, 3], 'a forgotten for c');
    read('b');
    assert.equal(written.count, 3, 'b held');
    read('a');
    assert.equal(written.count, 4, 'a written again, c forgotten for it (b was read since)');
    read('b');
    assert.equal(written.count, 4, 'b still held');
    read('c');
    assert.equal(written.count, 5);
    const many = new PageCache(100 * 1024 * 1024);
    for (let i = 0; i < 300; i += 1) many.body(`page-${i}`, page([1], '[]', written));
    assert.equal(many.pageCount, 256, 'no more pages than its count, however small');
  });

  test('a body too big for the budget, or a key too long, is sent but not kept', () => {
    const cache = new PageCache(1100);
    const written = { count: 0 };
    assert.equal(cache.body('big', page([1], `"${'x'.repeat(600)}"`, written)).length, 602);
    assert.equal(cache.body('k'.repeat(2000), page([1], '[]', written)).toString(), '[]');
    assert.deepEqual([cache.pageCount, cache.size], [0, 0]);
  });
});
