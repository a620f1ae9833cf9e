// ReadCoalescer: identical reads in flight share one answer, and no caller gets a read that began before it asked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ReadCoalescer } from '../src/http/read-coalescing.js';
import { gate } from './support/gate.js';

/** Reads that each wait for their own gate, kept in `gates` in the order they began. */
function gatedReads() {
  const gates: Array<ReturnType<typeof gate<string>>> = [];
  return {
    gates,
    read: (): Promise<string> => {
      const g = gate<string>();
      gates.push(g);
      return g.promise;
    },
  };
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('callers who come while a read runs share the next read, which starts once the running one settled', async () => {
  const shared = new ReadCoalescer<string>();
  const reads = gatedReads();
  const first = shared.read('k', reads.read);
  await turn();
  const second = shared.read('k', reads.read);
  const third = shared.read('k', reads.read);
  await turn();
  assert.equal(reads.gates.length, 1, 'no second read while the first runs');
  reads.gates[0]?.open('before');
  assert.equal(await first, 'before');
  await turn();
  assert.equal(reads.gates.length, 2, 'one read for both waiting callers');
  reads.gates[1]?.open('after');
  assert.deepEqual(await Promise.all([second, third]), ['after', 'after'], 'the callers who came during the first read get the one begun after they asked');
  await turn();
  assert.equal(shared.inFlight, 0, 'nothing is kept once the reads settled');
});

test('a caller who comes while the next read already runs waits for the one after it', async () => {
  const shared = new ReadCoalescer<string>();
  const reads = gatedReads();
  void shared.read('k', reads.read);
  await turn();
  const second = shared.read('k', reads.read);
  reads.gates[0]?.open('1');
  await turn();
  assert.equal(reads.gates.length, 2);
  const third = shared.read('k', reads.read);
  reads.gates[1]?.open('2');
  assert.equal(await second, '2');
  await turn();
  assert.equal(reads.gates.length, 3, 'the third caller came after the second read began');
  reads.gates[2]?.open('3');
  assert.equal(await third, '3');
});

test('a failed read fails its callers only, and the waiting callers get a read of their own', async () => {
  const shared = new ReadCoalescer<string>();
  const reads = gatedReads();
  const first = shared.read('k', reads.read);
  await turn();
  const second = shared.read('k', reads.read);
  reads.gates[0]?.fail(new Error('database went away'));
  await assert.rejects(first, /database went away/);
  await turn();
  reads.gates[1]?.open('recovered');
  assert.equal(await second, 'recovered');
});

test('reads of other keys do not wait for each other', async () => {
  const shared = new ReadCoalescer<string>();
  const reads = gatedReads();
  const a = shared.read('a', reads.read);
  const b = shared.read('b', () => Promise.resolve('b at once'));
  assert.equal(await b, 'b at once');
  await turn();
  reads.gates[0]?.open('a');
  assert.equal(await a, 'a');
  await turn();
  assert.equal(shared.inFlight, 0);
});

test('a read that throws before it returns a promise fails its callers, not the caller of read()', async () => {
  const shared = new ReadCoalescer<string>();
  const answer = shared.read('k', () => {
    throw new Error('bad query');
  });
  await assert.rejects(answer, /bad query/);
  await turn();
  assert.equal(shared.inFlight, 0);
});
