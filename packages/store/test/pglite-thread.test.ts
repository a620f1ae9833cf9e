// The embedded database runs in a worker thread of its own (pglite-client.ts): a long statement
// must leave the caller's thread free, errors must cross with the fields callers test, a closed
// database must refuse statements, and an idle one must not hold its process open.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { openDatabase, type Db } from '@trellis/store';
import { openTestDb } from '@trellis/store/testing';

let db: Db;
let cleanup: () => Promise<void>;

before(async () => {
  ({ db, cleanup } = await openTestDb('pglite_thread'));
});
after(async () => cleanup());

/** The longest pause of this thread's timers while `work` runs, and how long it ran, in ms. */
async function longestPause(work: () => Promise<unknown>): Promise<{ pause: number; took: number }> {
  let last = performance.now();
  let pause = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    pause = Math.max(pause, now - last);
    last = now;
  }, 5);
  const started = performance.now();
  try {
    await work();
    return { pause: Math.max(pause, performance.now() - last), took: performance.now() - started };
  } finally {
    clearInterval(timer);
  }
}

test('a long statement leaves the calling thread free', async () => {
  // About a second on PGlite, a few hundred ms on PostgreSQL: PGlite on the calling thread held it for all of it.
  const { pause, took } = await longestPause(() => db.query('SELECT count(*) FROM generate_series(1, $1::int)', [4_000_000]));
  assert.ok(took > 150, `the statement took ${took.toFixed(0)} ms, too short to tell`);
  assert.ok(pause < took / 2, `timers paused ${pause.toFixed(0)} ms of a ${took.toFixed(0)} ms statement`);
});

test('a database error keeps its code and constraint', async () => {
  await db.exec('CREATE TABLE thread_unique (id int CONSTRAINT thread_unique_pkey PRIMARY KEY)');
  await db.query('INSERT INTO thread_unique VALUES ($1)', [1]);
  const refused = (error: Error & { code?: unknown; constraint?: unknown }) => error instanceof Error && error.code === '23505' && error.constraint === 'thread_unique_pkey';
  await assert.rejects(db.query('INSERT INTO thread_unique VALUES ($1)', [1]), refused);
  await assert.rejects(db.transaction((tx) => tx.query('INSERT INTO thread_unique VALUES ($1)', [1])), refused);
});

test('a transaction whose callback throws is rolled back, and the error is the callback\'s', async () => {
  await db.exec('CREATE TABLE thread_tx (id int)');
  const mine = new Error('changed my mind');
  await assert.rejects(
    db.transaction(async (tx) => {
      await tx.query('INSERT INTO thread_tx VALUES ($1)', [1]);
      throw mine;
    }),
    (error) => error === mine,
  );
  assert.deepEqual(await db.query('SELECT count(*)::int AS n FROM thread_tx'), [{ n: 0 }]);
  assert.deepEqual(await db.transaction((tx) => tx.query('INSERT INTO thread_tx VALUES ($1) RETURNING id', [2])), [{ id: 2 }]);
  assert.deepEqual(await db.query('SELECT id FROM thread_tx'), [{ id: 2 }]);
});

test('a closed embedded database refuses statements', async () => {
  const own = await openDatabase({ dataDir: undefined });
  await own.close();
  await assert.rejects(own.query('SELECT 1'), /closed/);
  await assert.rejects(own.query('SELECT $1::int', [1]), /closed/);
});

test('an embedded database left open does not keep its process alive', async () => {
  // A program that forgets to close it must still end when its work is done.
  const program = "import { openDatabase } from '@trellis/store'; const db = await openDatabase({}); console.log(JSON.stringify(await db.query('SELECT $1::int AS n', [7])));";
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', '--input-type=module', '-e', program], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearTimeout(timer);
  assert.equal(code, 0, out);
  assert.match(out, /\[\{"n":7\}\]/);
});
