// A local run whose start fails ends Failed with the reason, and its queue slot is freed: before,
// an unexpected error (the database down while the definition was read) left it Running for
// good, since the local executor heartbeats as a worker and nothing marked it lost. The executor
// runs here with its real parts on a PostgreSQL cluster of this file's own, stopped while a run
// starts, so the start fails at a known point.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunStatus } from '@trellis/core';
import { admitQueuedRuns, failInterruptedRuns, getRun, insertRun, openDatabase, type Db, type RunRecord } from '@trellis/store';
import { startThrowawayCluster, type ThrowawayCluster } from '@trellis/store/testing';
import { ProfileService, SecretKeyring } from '@trellis/coordinator';
import { LocalExecutor } from '../src/execution/local-executor.js';
import { RunEnds } from '../src/runs/run-ends.js';
import { SpecCache } from '../src/execution/spec-cache.js';
import { LogFollowers } from '../src/logs/log-followers.js';
import { captureLog, type LogCapture } from './support/log-capture.js';

const SPEC = 'steps:\n  - echo started\n';

let cluster: ThrowawayCluster;
let db: Db;
let dir: string;
const executors: LocalExecutor[] = [];

before(async () => {
  cluster = await startThrowawayCluster();
  db = await openDatabase({ databaseUrl: cluster.url });
  dir = mkdtempSync(join(tmpdir(), 'trellis-start-failures-'));
  mkdirSync(join(dir, 'dags'));
});

after(async () => {
  // No grace: an executor a failed test left with a run is stopped at once.
  await Promise.all(executors.map((executor) => executor.drain(0)));
  await db.close().catch(() => undefined);
  await cluster.destroy();
  rmSync(dir, { recursive: true, force: true });
});

interface TestExecutor {
  executor: LocalExecutor;
  workerId: string;
  log: LogCapture;
  /** Resolves the next time a run ends and frees its slot. */
  nextSlotFreed(): Promise<void>;
  /** Log lines about this run. */
  linesOf(dagRunId: string): Array<Record<string, unknown>>;
}

/** A local executor as a coordinator assembles it, on this file's database, logging at debug. */
function newExecutor(name: string): TestExecutor {
  const log = captureLog('debug');
  const keyring = new SecretKeyring(undefined, [], 'no key in this test');
  const workerId = `local:${name}`;
  const executor = new LocalExecutor({
    db,
    logFollowers: new LogFollowers(db, log.logger),
    logger: log.logger,
    logDir: join(dir, 'logs'),
    dagsDir: join(dir, 'dags'),
    docsDir: '',
    envPassthrough: ['PATH'],
    envPassthroughPrefixes: [],
    specs: new SpecCache(db),
    workerId,
    observer: { started: () => undefined, finished: () => undefined, logBytesRefused: () => undefined },
    ends: new RunEnds(),
    specOfDag: () => undefined,
    profiles: new ProfileService(db, keyring),
    sealer: keyring,
  });
  executors.push(executor);
  let waiting: Array<() => void> = [];
  executor.onSlotFreed(() => {
    const woken = waiting;
    waiting = [];
    for (const wake of woken) wake();
  });
  return {
    executor,
    workerId,
    log,
    nextSlotFreed: () => new Promise((resolve) => waiting.push(resolve)),
    linesOf: (dagRunId) => log.lines().filter((line) => line.dagRunId === dagRunId),
  };
}

/** Queues a run of `dagName` in its DAG-local queue (one slot). */
async function queueRun(dagName: string, dagRunId: string): Promise<void> {
  await insertRun(db, {
    dagName, dagRunId, fileName: '', attemptId: `${dagRunId}-1`, status: RunStatus.Queued, params: '[]', queueName: dagName,
    logFile: join(dir, 'logs', dagName, dagRunId, 'run.log'), specYaml: SPEC, labels: [], trigger: 'manual',
    triggeredBy: { kind: 'anonymous', id: 'anonymous', name: 'anonymous' }, noReuse: false,
  });
}

/** What the dispatcher does: the queued runs this executor may take now, moved to Running under its worker id. */
async function admit(t: TestExecutor): Promise<RunRecord[]> {
  return (await admitQueuedRuns(db, { limits: new Map(), defaultLimit: 1, workerId: t.workerId, target: { kind: 'local' }, batch: 8 })).runs;
}

/** Waits until `done` holds, as the log shows; the log so far if it never does. */
async function until(done: () => boolean, log: LogCapture, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) assert.fail(`never happened; the log:\n${log.text()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function runOf(dagName: string, dagRunId: string): Promise<RunRecord> {
  const run = await getRun(db, dagName, dagRunId);
  assert.ok(run !== undefined, `run ${dagName}/${dagRunId} is gone`);
  return run;
}

describe('a local run whose start fails', () => {
  test('with the database down: once it is back the run is Failed with why, and the next run of its queue runs', { timeout: 60_000 }, async () => {
    const t = newExecutor('outage');
    await queueRun('outage', 'first');
    await queueRun('outage', 'second');
    const [first] = await admit(t);
    assert.equal(first?.dagRunId, 'first');
    assert.deepEqual(await admit(t), [], 'the queue has one slot, and the first run holds it');

    await cluster.stop();
    const freed = t.nextSlotFreed();
    let slotFreed = false;
    void freed.then(() => (slotFreed = true));
    // The definition is read from the database, which refuses the connection.
    await t.executor.start(first);
    assert.equal(t.executor.has(first.id), false, 'the engine never got the run');
    const failedLines = t.linesOf('first').filter((line) => line.message === 'run cannot start');
    assert.equal(failedLines.length, 1, t.log.text());
    assert.equal(failedLines[0]?.level, 'error');
    assert.match(String(failedLines[0]?.error), /^the run could not start: .*ECONNREFUSED/);
    // The store retries a refused connection a few times itself; the executor's own retries are what an outage needs.
    await until(() => t.linesOf('first').some((line) => line.level === 'debug'), t.log);
    assert.equal(slotFreed, false, 'nothing is freed before the failure is recorded');

    await cluster.start();
    await freed;
    const failed = await runOf('outage', 'first');
    assert.equal(failed.status, RunStatus.Failed);
    assert.match(failed.error, /^the run could not start: .*ECONNREFUSED/);
    assert.ok(failed.finishedAt !== null);
    const lines = t.linesOf('first');
    const recorded = lines.filter((line) => line.message === 'a run that could not start is recorded as failed');
    assert.equal(recorded.length, 1, t.log.text());
    assert.ok(Number(recorded[0]?.attempts) > 1, t.log.text());
    // Each retry is a debug line; the outage costs the error line above and nothing else above info.
    assert.equal(lines.filter((line) => line.level === 'debug').length, Number(recorded[0]?.attempts) - 1, t.log.text());
    assert.deepEqual(lines.filter((line) => line.level === 'error' || line.level === 'warn').map((line) => line.message), ['run cannot start']);

    // The slot is free: the second run is admitted and runs to the end.
    const [second] = await admit(t);
    assert.equal(second?.dagRunId, 'second');
    const secondEnded = t.nextSlotFreed();
    await t.executor.start(second);
    assert.equal(t.executor.has(second.id), true);
    await secondEnded;
    const succeeded = await runOf('outage', 'second');
    assert.equal(succeeded.status, RunStatus.Success, succeeded.error);
  });

  test('with a statement the database refuses (not an outage): the run is Failed at once with the database error', { timeout: 60_000 }, async () => {
    const t = newExecutor('refused');
    await queueRun('refused', 'only');
    const [run] = await admit(t);
    assert.ok(run !== undefined);
    // The start's first read is the definition: its table is not there (a schema this build does not know).
    await db.query('ALTER TABLE dag_specs RENAME TO dag_specs_away');
    try {
      const freed = t.nextSlotFreed();
      await t.executor.start(run);
      await freed;
    } finally {
      await db.query('ALTER TABLE dag_specs_away RENAME TO dag_specs');
    }
    const failed = await runOf('refused', 'only');
    assert.equal(failed.status, RunStatus.Failed, t.log.text());
    assert.equal(failed.error, 'the run could not start: relation "dag_specs" does not exist');
    const recorded = t.linesOf('only').find((line) => line.message === 'a run that could not start is recorded as failed');
    assert.equal(recorded?.attempts, 1, t.log.text());
  });

  test('while the database stays down, a shutdown does not wait for it: the run is left Running for the next start-up to fail', { timeout: 60_000 }, async () => {
    const t = newExecutor('shutdown');
    await queueRun('shutdown', 'cut-off');
    const [run] = await admit(t);
    assert.ok(run !== undefined);

    await cluster.stop();
    await t.executor.start(run);
    const draining = Date.now();
    executors.splice(executors.indexOf(t.executor), 1);
    await t.executor.drain(0);
    const drainMs = Date.now() - draining;
    assert.ok(drainMs < 5000, `drain took ${drainMs} ms`);
    const given = t.linesOf('cut-off').filter((line) => line.level === 'error').map((line) => String(line.message));
    assert.equal(given.length, 2, t.log.text());
    assert.equal(given[0], 'run cannot start');
    assert.match(given[1] ?? '', /^could not record that a run failed to start \(the coordinator shut down while the database could not be reached\): it stays Running until the next start-up/);

    await cluster.start();
    assert.equal((await runOf('shutdown', 'cut-off')).status, RunStatus.Running);
    // What that start-up does with the runs its previous process left behind.
    await failInterruptedRuns(db, t.workerId, 'the coordinator stopped while this run was running');
    assert.equal((await runOf('shutdown', 'cut-off')).status, RunStatus.Failed);
  });
});
