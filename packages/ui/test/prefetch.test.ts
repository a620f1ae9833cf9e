// Prefetched answers: a page takes the answer already on its way instead of asking again, and
// one that has arrived can be taken at once (the page's first render shows it).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { prefetchable } from '../src/lib/prefetch.js';

/** A loader that counts its calls and answers when told. */
function controlled() {
  const calls: string[] = [];
  const answers: Array<{ resolve: (v: string) => void; reject: (e: Error) => void }> = [];
  const load = prefetchable('test', (id: string) => {
    calls.push(id);
    return new Promise<string>((resolve, reject) => answers.push({ resolve, reject }));
  });
  return { load, calls, answers };
}

describe('prefetchable', () => {
  test('a call takes the prefetched answer; the next call asks again', async () => {
    const { load, calls, answers } = controlled();
    load.prefetch('a');
    const taken = load('a');
    assert.deepEqual(calls, ['a']);
    answers[0]?.resolve('A');
    assert.equal(await taken, 'A');
    void load('a');
    assert.deepEqual(calls, ['a', 'a']);
  });

  test('arrived gives the answer only once it is in, and takes it', async () => {
    const { load, calls, answers } = controlled();
    load.prefetch('b');
    assert.equal(load.arrived('b'), undefined, 'still on its way');
    answers[0]?.resolve('B');
    await new Promise((r) => setTimeout(r, 0));
    assert.equal(load.arrived('other'), undefined, 'another argument was never prefetched');
    assert.equal(load.arrived('b'), 'B');
    assert.equal(load.arrived('b'), undefined, 'taken');
    void load('b');
    assert.deepEqual(calls, ['b', 'b']);
  });

  test('a failed answer never arrives and reaches the page that takes it', async () => {
    const { load, answers } = controlled();
    load.prefetch('c');
    answers[0]?.reject(new Error('refused'));
    await new Promise((r) => setTimeout(r, 0));
    assert.equal(load.arrived('c'), undefined);
    await assert.rejects(load('c'), /refused/);
  });
});
