// A wait for a run's end looks again as soon as the run's end is announced here, not at its next poll.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RunStatus, type Task } from '@trellis/core';
import { insertRun, updateRunStatus, type Db, type Queryable, type RunRecord } from '@trellis/store';
import { openTestDb } from '@trellis/store/testing';
import { RunEnds } from '../src/runs/run-ends.js';
import { waitForRunEnd } from '../src/runs/run-waiter.js';
import { ReportApplier } from '../src/execution/report-applier.js';
import { captureLog } from './support/log-capture.js';
import { snapshotJson } from './support/report-snapshot.js';

/** Longer than the test's own timeout: a wait that ends did not end by polling. */
const NEVER_MS = 600_000;
const WORKER = 'ends-worker';

let db: Db;
let cleanup: () => Promise<void>;

before(async () => {
  ({ db, cleanup } = await openTestDb('run_ends'));
});

after(async () => cleanup());

async function running(dagRunId: string): Promise<RunRecord> {
  const run = await insertRun(db, {
    dagName: 'ends', dagRunId, fileName: 'ends', attemptId: `${dagRunId}-a1`, status: RunStatus.Running, params: '[]', queueName: 'ends',
    logFile: `/logs/ends/${dagRunId}/run.log`, specYaml: 'steps: [true]', labels: [], trigger: 'manual', triggeredBy: { kind: 'anonymous', id: 'anonymous', name: 'anonymous' }, noReuse: false,
  });
  // Held by a worker, as a report applier expects of the runs it is sent reports of.
  await updateRunStatus(db, { runId: run.id, attemptId: run.attemptId, expected: [RunStatus.Running], next: RunStatus.Running, workerId: WORKER });
  return run;
}

async function finish(run: RunRecord): Promise<void> {
  await updateRunStatus(db, { runId: run.id, attemptId: run.attemptId, expected: [RunStatus.Running], next: RunStatus.Success, finishedAt: new Date() });
}

/**
 * Waits for the run's end with a poll that never comes (aborted when the test ends), and resolves
 * `firstRead` once the wait's first look has answered: a change made after that reaches the wait
 * only by a wake.
 */
function waitWithoutPoll(t: { after: (fn: () => void) => void }, dagRunId: string, wakeOn: (wake: () => void) => () => void) {
  const controller = new AbortController();
  t.after(() => controller.abort());
  let answered: () => void = () => undefined;
  const firstRead = new Promise<void>((resolve) => (answered = resolve));
  const watched: Queryable = {
    query: async <T,>(sql: string, params?: unknown[]): Promise<T[]> => {
      const rows = await db.query<T>(sql, params);
      answered();
      return rows;
    },
  };
  const end = waitForRunEnd(watched, 'ends', dagRunId, { wakeOn, pollMs: NEVER_MS, signal: controller.signal });
  return { end, firstRead };
}

describe('run ends', () => {
  test("a wait woken by the run's end reads it at once, whatever its poll interval", { timeout: 60_000 }, async (t) => {
    const ends = new RunEnds();
    const run = await running('woken');
    const { end, firstRead } = waitWithoutPoll(t, 'woken', ends.wakeOn('ends', 'woken'));
    await firstRead;
    await finish(run);
    ends.ended('ends', 'woken');
    const result = await end;
    assert.equal(result.state, 'finished');
    assert.equal(result.state === 'finished' ? result.status : undefined, RunStatus.Success);
  });

  test("another run's end does not wake the wait, and a finished wait no longer listens", { timeout: 60_000 }, async (t) => {
    const ends = new RunEnds();
    const run = await running('other');
    let wakes = 0;
    const wakeOn = ends.wakeOn('ends', 'other');
    const { end, firstRead } = waitWithoutPoll(t, 'other', (wake) =>
      wakeOn(() => {
        wakes += 1;
        wake();
      }),
    );
    await firstRead;
    ends.ended('ends', 'someone-else');
    assert.equal(wakes, 0);
    await finish(run);
    ends.ended('ends', 'other');
    assert.equal((await end).state, 'finished');
    assert.equal(wakes, 1);
    ends.ended('ends', 'other');
    assert.equal(wakes, 1, 'unsubscribed when the wait returned');
  });

  test("a worker's report that ends the run wakes the waits for it", { timeout: 60_000 }, async (t) => {
    const ends = new RunEnds();
    const log = captureLog('warn');
    const observer = { started: () => undefined, finished: () => undefined, logBytesRefused: () => undefined };
    const applier = new ReportApplier(db, observer, 60_000, { appended: () => undefined }, ends, log.logger);
    const run = await running('reported');
    const ref = { dagName: 'ends', dagRunId: 'reported', attemptId: run.attemptId };
    const task = { ref, rootDagRunName: 'ends', rootDagRunId: 'reported', paramsJson: '[]' } as Task;
    const { end, firstRead } = waitWithoutPoll(t, 'reported', ends.wakeOn('ends', 'reported'));
    await firstRead;
    const outcome = await applier.apply(WORKER, ref, [{ seq: 1, body: 'statusJson', statusJson: snapshotJson(task, { status: RunStatus.Success, step: 's', stdout: 's.out' }) }]);
    assert.equal(outcome.finished, true);
    const result = await end;
    assert.equal(result.state === 'finished' ? result.status : undefined, RunStatus.Success);
  });
});
