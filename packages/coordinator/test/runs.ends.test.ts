// A wait for a run's end looks again as soon as the run's end is announced here, not at its next poll.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RunStatus } from '@trellis/core';
import { insertRun, updateRunStatus, type Db, type RunRecord } from '@trellis/store';
import { openTestDb } from '@trellis/store/testing';
import { RunEnds } from '../src/runs/run-ends.js';
import { waitForRunEnd } from '../src/runs/run-waiter.js';

/** Longer than the test's own timeout: a wait that ends did not end by polling. */
const NEVER_MS = 600_000;

let db: Db;
let cleanup: () => Promise<void>;

before(async () => {
  ({ db, cleanup } = await openTestDb('run_ends'));
});

after(async () => cleanup());

function running(dagRunId: string): Promise<RunRecord> {
  return insertRun(db, {
    dagName: 'ends', dagRunId, fileName: 'ends', attemptId: `${dagRunId}-a1`, status: RunStatus.Running, params: '[]', queueName: 'ends',
    logFile: `/logs/ends/${dagRunId}/run.log`, specYaml: 'steps: [true]', labels: [], trigger: 'manual', triggeredBy: { kind: 'anonymous', id: 'anonymous', name: 'anonymous' }, noReuse: false,
  });
}

async function finish(run: RunRecord): Promise<void> {
  await updateRunStatus(db, { runId: run.id, attemptId: run.attemptId, expected: [RunStatus.Running], next: RunStatus.Success, finishedAt: new Date() });
}

describe('run ends', () => {
  test('a wait woken by the run\'s end reads it at once, whatever its poll interval', { timeout: 60_000 }, async (t) => {
    const ends = new RunEnds();
    const run = await running('woken');
    // A failing assertion must not leave the wait holding the process for NEVER_MS.
    const controller = new AbortController();
    t.after(() => controller.abort());
    const waiting = waitForRunEnd(db, 'ends', 'woken', { wakeOn: ends.wakeOn('ends', 'woken'), pollMs: NEVER_MS, signal: controller.signal });
    await finish(run);
    ends.ended('ends', 'woken');
    const end = await waiting;
    assert.equal(end.state, 'finished');
    assert.equal(end.state === 'finished' ? end.status : undefined, RunStatus.Success);
  });

  test('another run\'s end does not wake the wait, and a finished wait no longer listens', { timeout: 60_000 }, async (t) => {
    const ends = new RunEnds();
    const run = await running('other');
    const controller = new AbortController();
    t.after(() => controller.abort());
    let looks = 0;
    const wakeOn = ends.wakeOn('ends', 'other');
    const waiting = waitForRunEnd(db, 'ends', 'other', {
      wakeOn: (wake) => wakeOn(() => {
        looks += 1;
        wake();
      }),
      pollMs: NEVER_MS,
      signal: controller.signal,
    });
    ends.ended('ends', 'someone-else');
    assert.equal(looks, 0);
    await finish(run);
    ends.ended('ends', 'other');
    assert.equal((await waiting).state, 'finished');
    assert.equal(looks, 1);
    ends.ended('ends', 'other');
    assert.equal(looks, 1, 'unsubscribed when the wait returned');
  });
});
