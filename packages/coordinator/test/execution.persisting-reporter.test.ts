// The coordinator's own reporter batches a burst of reports into one write, and the run's end
// is written at once, never after the batch window. On a real database (PGlite, or the server
// TRELLIS_TEST_DATABASE_URL names), with a window long enough that only the cut can end it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RunStatus } from '@trellis/core';
import type { RunSnapshot } from '@trellis/engine';
import { getRun, insertRun, logBytes, type Db, type Queryable, type RunRecord } from '@trellis/store';
import { openTestDb } from '@trellis/store/testing';
import { createSilentLogger } from '@trellis/coordinator';
import { PersistingReporter } from '../src/execution/persisting-reporter.js';

let db: Db;
let cleanup: () => Promise<void>;
let run: RunRecord;
/** Statements the reporter sent, counted through the Db it is given. */
let statements = 0;
/** Aborted before the database closes: a write still waiting then gives up instead of retrying for minutes. */
const shutdown = new AbortController();

before(async () => {
  ({ db, cleanup } = await openTestDb('persisting_reporter'));
  run = await insertRun(db, {
    dagName: 'burst', dagRunId: 'r1', fileName: 'burst', attemptId: 'a1', status: RunStatus.Running, params: '[]', queueName: 'burst',
    logFile: '/logs/burst/r1.1/run.log', specYaml: 'steps: [echo]', labels: [], trigger: 'manual', triggeredBy: { kind: 'anonymous', id: 'anonymous', name: 'anonymous' }, noReuse: false,
  });
});

after(async () => {
  shutdown.abort();
  await cleanup();
});

function counted(q: Queryable): Queryable {
  return {
    query: <T>(sql: string, params?: unknown[]): Promise<T[]> => {
      statements += 1;
      return q.query<T>(sql, params);
    },
  };
}

function counting(inner: Db): Db {
  return { ...inner, ...counted(inner), transaction: <T>(fn: (tx: Queryable) => Promise<T>) => inner.transaction((tx) => fn(counted(tx))) };
}

function snapshot(status: RunStatus, finishedAt = ''): RunSnapshot {
  return {
    dagName: 'burst', dagRunId: 'r1', attemptId: 'a1', rootDagRunName: 'burst', rootDagRunId: 'r1', parentDagRunName: '', parentDagRunId: '',
    status, statusLabel: '', startedAt: new Date().toISOString(), finishedAt, log: run.logFile, params: '[]', error: '', nodes: [], handlers: {}, waitingSteps: [],
  };
}

describe('persisting reporter', () => {
  // A 30 s window: without the cut at the run's end, this test times out at 15 s.
  test("a burst is one write, and the run's end does not wait out the window", { timeout: 15_000 }, async () => {
    const reporter = new PersistingReporter(counting(db), run, createSilentLogger(), { appended: () => undefined }, shutdown.signal, 30_000);
    reporter.onStatus(snapshot(RunStatus.Running));
    reporter.onLog({ stream: 'run.log', path: '/logs/burst/r1.1/run.log', offset: 0, data: Buffer.from('run started\n') });
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(statements, 0, 'nothing written while the window is open');
    reporter.onLog({ stream: 'run.log', path: '/logs/burst/r1.1/run.log', offset: 12, data: Buffer.from('run finished\n') });
    reporter.onStatus(snapshot(RunStatus.Success, new Date().toISOString()));
    await reporter.settled();
    assert.equal(statements, 1);
    assert.equal((await getRun(db, 'burst', 'r1'))?.status, RunStatus.Success);
    assert.equal((await logBytes(db, { runId: run.id, attemptId: 'a1', stream: 'run.log' }, 0, 100)).toString(), 'run started\nrun finished\n');
  });
});
