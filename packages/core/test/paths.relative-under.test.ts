import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isAbsolute, relative, sep } from 'node:path';
import { relativeUnder } from '@trellis/core';

/** What relativeUnder means, by node:path alone: the answer of its slow path for every input. */
function expected(root: string, path: string): string | undefined {
  const rel = relative(root, path);
  return rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel) ? undefined : rel;
}

/** A deterministic generator, so that a failure names inputs that fail again. */
function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    // 32-bit arithmetic (Math.imul): a product past 2^53 would lose its low bits as a double.
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

// Line breaks too: a regular expression's `.` does not match them.
const SEGMENTS = ['a', 'b', 'ab', '.', '..', '', '.x', '..y', 'a b', 'logs', 'x\n', '\u2028', '\r'];

function randomPath(next: () => number): string {
  const count = Math.floor(next() * 5);
  const segments = Array.from({ length: count }, () => SEGMENTS[Math.floor(next() * SEGMENTS.length)] ?? 'a');
  const lead = next() < 0.85 ? '/' : '';
  const trail = next() < 0.15 ? '/' : '';
  return `${lead}${segments.join('/')}${trail}`;
}

describe('relativeUnder', () => {
  test('answers as node:path relative does, for paths normalised or not, absolute or not', () => {
    const next = lcg(23);
    for (let i = 0; i < 20_000; i += 1) {
      const root = randomPath(next);
      // Half the paths are built under the root, as the callers build them, so that both answers occur often.
      const path = next() < 0.5 ? `${root}/${randomPath(next)}` : randomPath(next);
      assert.equal(relativeUnder(root, path), expected(root, path), `relativeUnder(${JSON.stringify(root)}, ${JSON.stringify(path)})`);
    }
  });

  test('cases at the edges', () => {
    assert.equal(relativeUnder('/', '/a'), 'a');
    assert.equal(relativeUnder('/', '/'), undefined);
    assert.equal(relativeUnder('/logs', '/logs'), undefined);
    assert.equal(relativeUnder('/logs', '/logs/'), undefined);
    assert.equal(relativeUnder('/logs', '/logsx/a'), undefined);
    assert.equal(relativeUnder('/logs', '/logs/run/a.log'), 'run/a.log');
    assert.equal(relativeUnder('/logs/', '/logs/a'), 'a');
    assert.equal(relativeUnder('/logs', '/logs/../etc'), undefined);
    assert.equal(relativeUnder('/logs', '/logs/./a'), 'a');
    assert.equal(relativeUnder('/logs', '/logs//a'), 'a');
    assert.equal(relativeUnder('/logs', '/logs/.hidden'), '.hidden');
    assert.equal(relativeUnder('/logs', '/logs/..x'), '..x');
    assert.equal(relativeUnder('/a\n/', '/a\n/b'), 'b');
    assert.equal(relativeUnder('/a', '/a/b\n/'), 'b\n');
  });
});
