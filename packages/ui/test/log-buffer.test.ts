// The log view's buffer: pieces that end inside a line join up, and however much arrives it
// keeps only its last lines.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { LogBuffer } from '../src/lib/log-buffer.js';

describe('LogBuffer', () => {
  test('a line cut between pieces is one line', () => {
    const buffer = new LogBuffer(10);
    buffer.append('tick 1\ntick');
    assert.equal(buffer.text, 'tick 1\ntick');
    buffer.append(' 2\n');
    assert.equal(buffer.text, 'tick 1\ntick 2\n');
  });

  test('keeps the last lines of a log far longer than it holds', () => {
    const buffer = new LogBuffer(3);
    for (let piece = 0; piece < 100; piece++) buffer.append(Array.from({ length: 1000 }, (_, i) => `line ${piece * 1000 + i + 1}\n`).join(''));
    assert.equal(buffer.text, 'line 99998\nline 99999\nline 100000\n');
  });

  test('clear starts again from nothing (a retry logs from its start)', () => {
    const buffer = new LogBuffer(3);
    buffer.append('first attempt\n');
    buffer.clear();
    buffer.append('second');
    assert.equal(buffer.text, 'second');
  });
});
