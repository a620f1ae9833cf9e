// When the dispatcher asks for an admission pass: at once while nothing waits for a queue slot,
// once for a burst of wakes while runs wait, and at once again when the last pass is long past.
// On a real database; the executor is a recorder (the dispatcher only hands it admitted runs and
// hears from it when a slot frees).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RunStatus } from '@trellis/core';
import { insertRun, type Db, type RunRecord } from '@trellis/store';
import { openTestDb } from '@trellis/store/testing';
import { Dispatcher } from '../src/admission/dispatcher.js';
import { QueueLimits } from '../src/admission/placement.js';
import type { LocalExecutor } from '../src/execution/local-executor.js';
import { createSilentLogger } from '../src/logging/logger.js';
import { until } from './support/until.js';

let db: Db;
let cleanup: () => Promise<void>;
/** Admission statements sent so far (counted as they are sent), and answered so far. */
let passes = 0;
let answered = 0;
/** While set, admission statements fail as they would with the database away. */
let databaseAway = false;

before(async () => {
  const opened = await openTestDb('admission_dispatcher');
  cleanup = opened.cleanup;
  const counted = opened.db;
  db = {
    ...counted,
    query: <T>(sql: string, params?: unknown[]) => {
      if (!sql.includes('trellis_admit')) return counted.query<T>(sql, params);
      passes += 1;
      const answer = databaseAway ? Promise.reject(new Error('connection refused')) : counted.query<T>(sql, params);
      return answer.finally(() => (answered += 1));
    },
  };
});
after(async () => cleanup());

async function queueRun(queueName: string, dagRunId: string): Promise<void> {
  await insertRun(db, {
    dagName: queueName, dagRunId, fileName: queueName, attemptId: `a-${dagRunId}`, status: RunStatus.Queued, params: '[]', queueName,
    logFile: '', specYaml: 'steps: [true]', labels: [], trigger: 'manual', triggeredBy: { kind: 'anonymous', id: 'anonymous', name: 'anonymous' }, noReuse: false, dispatchTarget: 'local', workerSelector: {},
  });
}

/** Records the runs handed to it; `free` plays a run's end. */
class RecordingExecutor {
  readonly started: string[] = [];
  private readonly listeners: Array<() => void> = [];
  onSlotFreed(listener: () => void): void {
    this.listeners.push(listener);
  }
  start(run: RunRecord): Promise<void> {
    this.started.push(run.dagRunId);
    return Promise.resolve();
  }
  free(): void {
    for (const listener of this.listeners) listener();
  }
}

/** Every admission sent has been answered and the dispatcher has taken in the answer (a few microtasks later). */
async function passesSettled(): Promise<void> {
  await until('the admissions sent to be answered', () => answered === passes);
  await new Promise((r) => setImmediate(r));
}

/**
 * Not started: start() would add the 2 s sweep, whose passes these counts do not expect. The
 * first pass comes from a wake instead. While runs wait, passes are `spacingMs` apart: wide
 * enough by default that a test's wakes fall inside it however slow the machine.
 */
function dispatcherFor(queueName: string, limit: number, executor: RecordingExecutor, spacingMs = 1000): Dispatcher {
  const limits = new QueueLimits(new Map([[queueName, limit]]), () => []);
  return new Dispatcher({ db, executor: executor as unknown as LocalExecutor, workerId: 'local:dispatcher-test', logger: createSilentLogger(), limits, backlogPassSpacingMs: spacingMs });
}

/**
 * A dispatcher on queue `full` (one slot, taken: runs wait) after its first pass, handed to
 * `body`, and stopped after it.
 */
async function afterFirstPass(spacingMs: number, body: (dispatcher: Dispatcher, executor: RecordingExecutor) => Promise<void>): Promise<void> {
  const executor = new RecordingExecutor();
  const dispatcher = dispatcherFor('full', 1, executor, spacingMs);
  try {
    dispatcher.wake('work');
    await passesSettled();
    await body(dispatcher, executor);
  } finally {
    await dispatcher.stop();
  }
}

describe('admission passes', () => {
  test('with no run waiting for a slot, a wake admits at once', async () => {
    const executor = new RecordingExecutor();
    const dispatcher = dispatcherFor('open', 5, executor);
    try {
      dispatcher.wake('work');
      // Its answer (nothing queued) is in before the run below is queued.
      await passesSettled();
      await queueRun('open', 'open-1');
      const before = passes;
      dispatcher.wake('work');
      // Sent in the wake's own turn, not after a gathering delay.
      assert.equal(passes, before + 1);
      await until('the run to start', () => executor.started.includes('open-1'));
    } finally {
      await dispatcher.stop();
    }
  });

  test('while runs wait for a full queue, a burst of wakes costs one pass', async () => {
    const executor = new RecordingExecutor();
    for (let i = 0; i < 4; i += 1) await queueRun('full', `full-${i}`);
    const dispatcher = dispatcherFor('full', 1, executor);
    try {
      dispatcher.wake('work');
      await until('the first run to start', () => executor.started.length === 1);
      await passesSettled();
      // The first run ends; other wakes (ends, new runs) follow within the same few ms.
      await db.query(`UPDATE runs SET status = ${RunStatus.Success} WHERE dag_run_id = $1`, [executor.started[0]]);
      const before = passes;
      executor.free();
      dispatcher.wake('work');
      executor.free();
      dispatcher.wake('work');
      assert.equal(passes, before, "no pass in the wakes' own turn");
      await until('the next run to start', () => executor.started.length === 2);
      await passesSettled();
      assert.equal(passes, before + 1, 'one pass for the four wakes');
      assert.deepEqual(executor.started, ['full-0', 'full-1']);
    } finally {
      await dispatcher.stop();
    }
  });

  test('while runs wait, a wake that comes after the spacing admits at once', async () => {
    // full-1 still runs in its queue of one; full-2 and full-3 wait.
    const spacingMs = 50;
    await afterFirstPass(spacingMs, async (_dispatcher, executor) => {
      assert.deepEqual(executor.started, [], 'the queue is full');
      const passEnded = performance.now();
      await db.query(`UPDATE runs SET status = ${RunStatus.Success} WHERE dag_run_id = 'full-1'`);
      await new Promise((r) => setTimeout(r, Math.max(0, passEnded + spacingMs * 2 - performance.now())));
      const before = passes;
      executor.free();
      // A serial queue's next run is not held back by the gathering.
      assert.equal(passes, before + 1, "the pass is sent in the wake's own turn");
      await until('the next run to start', () => executor.started.length === 1);
      assert.deepEqual(executor.started, ['full-2']);
    });
  });

  test('while runs wait, a wake during a pass waits for the spacing after it', async () => {
    // full-2 still runs in its queue of one; full-3 waits.
    const spacingMs = 200;
    await afterFirstPass(spacingMs, async (dispatcher, executor) => {
      await new Promise((r) => setTimeout(r, spacingMs * 2));
      const before = passes;
      dispatcher.wake('work');
      assert.equal(passes, before + 1, 'long after the last pass: one at once');
      // Sent while that pass waits for its answer.
      executor.free();
      await passesSettled();
      assert.equal(passes, before + 1, 'no second pass straight after the first');
      await until('the held pass', () => passes === before + 2);
    });
  });

  test('while runs wait and the database is away, a failed pass holds the next wakes for the spacing', async () => {
    const spacingMs = 300;
    await afterFirstPass(spacingMs, async (dispatcher, executor) => {
      await new Promise((r) => setTimeout(r, spacingMs * 2));
      databaseAway = true;
      try {
        const before = passes;
        dispatcher.wake('work');
        assert.equal(passes, before + 1, 'long after the last pass: one at once, which fails');
        await passesSettled();
        executor.free();
        dispatcher.wake('work');
        assert.equal(passes, before + 1, 'not another failing pass per wake');
        await until('the held pass', () => passes === before + 2);
      } finally {
        databaseAway = false;
      }
      await passesSettled();
    });
  });

  test('a stopped dispatcher sends no gathered pass', async () => {
    // full-2 still runs in its queue of one; full-3 waits. The wake comes well within the
    // spacing, and the wait after stop() goes well past it.
    const spacingMs = 300;
    await afterFirstPass(spacingMs, async (dispatcher, executor) => {
      const before = passes;
      executor.free();
      await dispatcher.stop();
      await new Promise((r) => setTimeout(r, spacingMs * 2));
      assert.equal(passes, before);
      assert.deepEqual(executor.started, []);
    });
  });
});
