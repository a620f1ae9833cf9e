// A transaction holds a pooled connection between its statements. When the server cuts that
// connection there (a restart, an administrator's terminate), the transaction must fail with a
// connection error the caller can answer, not end the process: `pg` reports the loss as an
// 'error' event, and a checked-out client has no pool listener for it. The coordinator died this
// way when CI's chaos test stopped PostgreSQL under load.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { isConnectionError, openDatabase, type Db, type Queryable } from '@trellis/store';
import { startThrowawayCluster, type ThrowawayCluster } from '@trellis/store/testing';

let cluster: ThrowawayCluster;
let db: Db;
const poolErrors: Error[] = [];

before(async () => {
  cluster = await startThrowawayCluster();
  db = await openDatabase({ databaseUrl: cluster.url, onBackgroundError: (error) => poolErrors.push(error) });
});

after(async () => {
  await db.close().catch(() => undefined);
  await cluster.destroy();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A transaction that loses its connection while it waits between two statements. */
async function cutBetweenStatements(cut: (pid: number) => Promise<void>): Promise<unknown> {
  return db
    .transaction(async (tx: Queryable) => {
      const [{ pid }] = (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')) as [{ pid: number }];
      await cut(pid);
      // Long enough for the loss to arrive while no statement is in flight.
      await sleep(300);
      await tx.query('SELECT 1');
      return 'committed';
    })
    .then(
      (value) => assert.fail(`the transaction ${String(value)} on a lost connection`),
      (error: unknown) => error,
    );
}

test('a connection terminated between two statements of a transaction fails the transaction, and the pool goes on', async () => {
  const before = poolErrors.length;
  const error = await cutBetweenStatements(async (pid) => {
    await db.query('SELECT pg_terminate_backend($1)', [pid]);
  });
  assert.ok(isConnectionError(error), `a connection error, got ${String(error)}`);
  assert.ok(poolErrors.length > before, 'the loss is reported to the pool error handler');
  // The broken connection was dropped, not pooled again: every connection works.
  const answers = await Promise.all(Array.from({ length: 12 }, () => db.query<{ n: number }>('SELECT 1 AS n')));
  assert.ok(answers.every((rows) => rows[0]?.n === 1));
});

test('the server stopping under an open transaction fails it; once the server is back, transactions work again', async () => {
  const error = await cutBetweenStatements(async () => {
    await cluster.stop('fast');
  });
  assert.ok(isConnectionError(error), `a connection error, got ${String(error)}`);
  await cluster.start();
  assert.deepEqual(await db.transaction((tx) => tx.query('SELECT 2 AS n')), [{ n: 2 }]);
});
