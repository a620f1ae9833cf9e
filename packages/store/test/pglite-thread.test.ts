// The embedded database runs in a worker thread of its own (pglite-client.ts): a long statement
// must leave the caller's thread free, errors must cross with the fields callers test,
// transactions must commit, fail and end as on PostgreSQL, statements must keep their order, a
// closed database must refuse statements, and an idle one must not hold its process open. The
// first tests run on the suite's backend; those of the thread's own rules on PGlite alone.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Db, type Queryable } from '@trellis/store';
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

test('a transaction whose commit fails throws the commit\'s error and leaves nothing', async () => {
  await db.exec('CREATE TABLE thread_deferred (id int CONSTRAINT thread_deferred_key UNIQUE DEFERRABLE INITIALLY DEFERRED)');
  await db.query('INSERT INTO thread_deferred VALUES ($1)', [1]);
  await assert.rejects(
    db.transaction(async (tx) => {
      await tx.query('INSERT INTO thread_deferred VALUES ($1)', [2]);
      await tx.query('INSERT INTO thread_deferred VALUES ($1)', [1]);
    }),
    (error: Error & { code?: unknown }) => error.code === '23505',
  );
  assert.deepEqual(await db.query('SELECT id FROM thread_deferred ORDER BY id'), [{ id: 1 }]);
});

test('a statement on a transaction that has ended is refused', async () => {
  let kept: Queryable | undefined;
  await db.transaction(async (tx) => {
    kept = tx;
    await tx.query('SELECT 1');
  });
  await assert.rejects(async () => kept?.query('SELECT $1::int AS n', [1]));
  assert.deepEqual(await db.query('SELECT $1::int AS n', [2]), [{ n: 2 }]);
});

test('embedded: statements sent together run in the order sent', async () => {
  const own = await openDatabase({ dataDir: undefined });
  try {
    await own.exec('CREATE TABLE thread_order (id int)');
    const sent = Array.from({ length: 40 }, (_, i) => [own.query('INSERT INTO thread_order VALUES ($1)', [i]), own.query<{ n: number }>('SELECT count(*)::int AS n FROM thread_order WHERE id >= $1', [0])]);
    const answers = await Promise.all(sent.map((pair) => Promise.all(pair)));
    assert.deepEqual(answers.map(([, count]) => count), Array.from({ length: 40 }, (_, i) => [{ n: i + 1 }]));
    // A transaction holds the session: a statement sent meanwhile runs after it, and sees its commit.
    const outside = { count: undefined as Promise<unknown> | undefined };
    await own.transaction(async (tx) => {
      await tx.query('INSERT INTO thread_order VALUES ($1)', [100]);
      outside.count = own.query('SELECT count(*)::int AS n FROM thread_order WHERE id = $1', [100]);
      await tx.query('INSERT INTO thread_order VALUES ($1)', [100]);
    });
    assert.deepEqual(await outside.count, [{ n: 2 }]);
  } finally {
    await own.close();
  }
});

test('embedded: a database opened, used and closed reports no background error', async () => {
  const heard: Error[] = [];
  const own = await openDatabase({ dataDir: undefined, onBackgroundError: (error) => heard.push(error) });
  await own.query('SELECT $1::int AS n', [1]);
  await own.close();
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(heard, []);
});

test('embedded: a parameter that cannot cross to the thread is refused, and the next statement runs', async () => {
  const own = await openDatabase({ dataDir: undefined });
  try {
    await assert.rejects(own.query('SELECT $1::text AS t', [() => 'a function']), (error) => error instanceof Error);
    assert.deepEqual(await own.query('SELECT $1::text AS t', ['text']), [{ t: 'text' }]);
  } finally {
    await own.close();
  }
});

test('embedded: a closed database refuses statements, from the moment it starts closing', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-thread-'));
  try {
    const own = await openDatabase({ dataDir: dir });
    const closing = own.close();
    await assert.rejects(own.query('SELECT 1'), /closed/);
    await assert.rejects(own.query('SELECT $1::int', [1]), /closed/);
    await Promise.all([closing, own.close()]);
    assert.equal(existsSync(join(dir, 'trellis.lock')), false, 'its lock released');
    const again = await openDatabase({ dataDir: dir });
    // A late close of the first leaves the lock the second holds.
    await own.close();
    assert.equal(existsSync(join(dir, 'trellis.lock')), true, 'the second opener keeps its lock');
    assert.deepEqual(await again.query('SELECT $1::int AS n', [3]), [{ n: 3 }]);
    await again.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('embedded: a data directory PGlite cannot open is refused with its reason, and its lock released', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-thread-'));
  try {
    // A cluster's version file and nothing else: what a copy cut short would leave.
    mkdirSync(join(dir, 'pgdata'));
    writeFileSync(join(dir, 'pgdata', 'PG_VERSION'), '17\n');
    await assert.rejects(openDatabase({ dataDir: dir }), (error) => error instanceof Error && /PGlite/.test(error.message));
    assert.equal(existsSync(join(dir, 'trellis.lock')), false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('embedded: a database left open does not keep its process alive, nor end it while a statement is pending', async () => {
  // A program that forgets to close it must still end when its work is done; one whose top-level
  // await waits on a statement must not end before its answer (exit code 13 says it did).
  const program =
    "import { openDatabase } from '@trellis/store'; const db = await openDatabase({}); await db.query('SELECT $1::text', [() => 1]).catch(() => undefined); console.log(JSON.stringify(await db.query('SELECT $1::int AS n', [7])));";
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
