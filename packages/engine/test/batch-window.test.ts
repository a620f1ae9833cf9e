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

  test('a wait ends when its time is up, and the next one waits its own time', async () => {
    const window = new BatchWindow(150);
    const first = window.wait();
    mock.timers.tick(149);
    assert.equal(await isDone(first), false);
    mock.timers.tick(1);
    assert.equal(await isDone(first), true);
    const next = window.wait();
    mock.timers.tick(100);
    assert.equal(await isDone(next), false);
    mock.timers.tick(50);
    assert.equal(await isDone(next), true);
  });

  test('end() ends the open wait at once, and later waits do not wait', async () => {
    const window = new BatchWindow(150);
    const open = window.wait();
    mock.timers.tick(100);
    window.end();
    assert.equal(await isDone(open), true);
    assert.equal(await isDone(window.wait()), true);
  });

  test('end() with no wait open: later waits do not wait either', async () => {
    const window = new BatchWindow(150);
    window.end();
    assert.equal(await isDone(window.wait()), true);
  });

  test("a second wait opened while one is open keeps its end(): the first one's timer does not disown it", async () => {
    const window = new BatchWindow(150);
    const first = window.wait();
    mock.timers.tick(100);
    const second = window.wait();
    mock.timers.tick(60);
    assert.equal(await isDone(first), true);
    assert.equal(await isDone(second), false);
    window.end();
    assert.equal(await isDone(second), true);
  });
});
