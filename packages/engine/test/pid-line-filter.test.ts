import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { PidLineFilter } from '../src/executors/placement-support.js';

function filterTo(): { filter: PidLineFilter; text: () => string } {
  const out = new PassThrough();
  let text = '';
  out.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  return { filter: new PidLineFilter('mk:', out), text: () => text };
}

describe('PidLineFilter (the pid line remote commands print first)', () => {
  test('a stop asked for before the pid line arrived reaches the pid when it does', async () => {
    const { filter, text } = filterTo();
    const signalled: number[] = [];
    filter.whenPid((pid) => signalled.push(pid));
    assert.equal(signalled.length, 0, 'nothing to signal yet');
    filter.write(Buffer.from('mk:43'));
    assert.equal(signalled.length, 0, 'the line is not complete');
    filter.write(Buffer.from('21\nan error line\n'));
    assert.deepEqual(signalled, [4321]);
    filter.whenPid((pid) => signalled.push(pid + 1));
    assert.deepEqual(signalled, [4321, 4322], 'a known pid is given at once');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(text(), 'an error line\n', 'the pid line is taken out of stderr');
  });

  test('output without the pid line is passed on and nobody waits for a pid forever', () => {
    const { filter, text } = filterTo();
    const signalled: number[] = [];
    filter.whenPid((pid) => signalled.push(pid));
    filter.write(Buffer.from('no marker here\n'));
    filter.flush();
    filter.whenPid((pid) => signalled.push(pid));
    assert.deepEqual(signalled, []);
    assert.equal(text(), 'no marker here\n');
  });
});
