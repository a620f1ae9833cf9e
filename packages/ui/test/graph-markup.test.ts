// The step graph's markup: step names are the user's, so they come out as text, never as markup.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { escapeMarkup, graphMarkup, NO_STATUS } from '../src/lib/graph-markup.js';
import { layeredLayout } from '../src/lib/layered-layout.js';

const OPTIONS = { nodeWidth: 180, nodeHeight: 44, rankGap: 48, nodeGap: 18, margin: 8 };

describe('graph markup', () => {
  test('escapes the characters that end text or a quoted attribute, and leaves other text alone', () => {
    assert.equal(escapeMarkup(`a<b>&"c"'d'`), 'a&lt;b&gt;&amp;&quot;c&quot;&#39;d&#39;');
    assert.equal(escapeMarkup('build-step_2 ✓'), 'build-step_2 ✓');
  });

  test('one node per step, named by its text, with a hostile name kept as text', () => {
    const hostile = '"><script>alert(1)</script>';
    const laid = layeredLayout(['fetch', hostile], [['fetch', hostile]], OPTIONS);
    const markup = graphMarkup(laid, 'g', true);
    assert.equal(markup.match(/<g /g)?.length, 2);
    assert.equal(markup.match(/<polyline /g)?.length, 1);
    assert.ok(!markup.includes('<script>'), markup);
    assert.ok(markup.includes(`data-step="${escapeMarkup(hostile)}"`));
    assert.ok(markup.includes('role="button" tabindex="0" aria-labelledby="g-1"') && markup.includes('<text id="g-1">'));
    assert.equal(markup.match(new RegExp(`data-status="${NO_STATUS}"`, 'g'))?.length, 2);
  });

  test('a graph nobody can select from draws its nodes as images', () => {
    const markup = graphMarkup(layeredLayout(['only'], [], OPTIONS), 'g', false);
    assert.ok(markup.includes('role="img"') && !markup.includes('tabindex'));
  });
});
