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

  test('past its budget the least recently read pages are forgotten; a body over it is not kept', () => {
    const cache = new PageCache(10);
    const written = { count: 0 };
    cache.body('a', page([1], '"aaaa"', written));
    cache.body('b', page([1], '"bbbb"', written));
    assert.equal(cache.size, 12 - 6, 'the first forgotten to make room for the second');
    cache.body('a', page([1], '"aaaa"', written));
    assert.equal(written.count, 3, 'a was written again');
    cache.body('b', page([1], '"bbbb"', written));
    assert.equal(written.count, 4, 'and b, forgotten for a');
    assert.equal(cache.body('big', page([1], '"0123456789"', written)).toString(), '"0123456789"');
    assert.equal(cache.size, 6, 'too big to keep: b stays');
    cache.body('b', page([1], '"bbbb"', written));
    assert.equal(written.count, 5, 'b read from the cache');
  });
});
