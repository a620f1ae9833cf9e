// KeyedTurns: the one in-process turn-taking behind login guesses, worker reports and sync steps.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KeyedTurns } from '../src/concurrency/keyed-turns.js';
import { gate } from './support/gate.js';

test('calls for one key run one after another, in call order, each after the previous settled, a failure included', async () => {
  const turns = new KeyedTurns();
  const log: string[] = [];
  const first = gate();
  const a = turns.run('k', async () => {
    log.push('a start');
    await first.promise;
    log.push('a end');
    throw new Error('a failed');
  });
  const b = turns.run('k', () => {
    log.push('b');
    return Promise.resolve('b done');
  });
  await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(log, ['a start'], 'b waits while a runs');
  first.open();
  await assert.rejects(a, /a failed/);
  assert.equal(await b, 'b done', "a's failure does not stop b");
  assert.deepEqual(log, ['a start', 'a end', 'b']);
});

test('calls for other keys do not wait', async () => {
  const turns = new KeyedTurns<'x' | 'y'>();
  const held = gate();
  const x = turns.run('x', () => held.promise);
  assert.equal(await turns.run('y', () => Promise.resolve('y ran')), 'y ran');
  held.open();
  await x;
  assert.equal(await turns.run('x', () => Promise.resolve('x again')), 'x again', 'a key whose calls all settled runs at once');
});
