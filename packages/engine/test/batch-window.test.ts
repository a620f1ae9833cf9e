import { afterEach, beforeEach, describe, mock, test } from 'node:test';
import assert from 'node:assert/strict';
import { BatchWindow } from '@trellis/engine';

/** Whether `promise` has settled by now (after the microtasks already queued). */
async function isDone(promise: Promise<void>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await Promise.resolve();
  await Promise.resolve();
  return done;
}

describe('batch window', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout'] }));
  afterEach(() => mock.timers.reset());

  test('a wait ends when its time is up', async () => {
    const window = new BatchWindow(150);
    const wait = window.wait();
    mock.timers.tick(149);
    assert.equal(await isDone(wait), false);
    mock.timers.tick(1);
    assert.equal(await isDone(wait), true);
  });

  test('close() ends the open wait at once; its timer cannot touch the next wait', async () => {
    const window = new BatchWindow(150);
    const first = window.wait();
    mock.timers.tick(100);
    window.close();
    assert.equal(await isDone(first), true);
    const next = window.wait();
    // Past the first wait's own time: had its timer survived, it would have disowned the next wait.
    mock.timers.tick(60);
    assert.equal(await isDone(next), false);
    window.close();
    assert.equal(await isDone(next), true);
  });

  test('close() with no wait open does nothing to the next one', async () => {
    const window = new BatchWindow(150);
    window.close();
    const wait = window.wait();
    assert.equal(await isDone(wait), false);
    mock.timers.tick(150);
    assert.equal(await isDone(wait), true);
  });
});
