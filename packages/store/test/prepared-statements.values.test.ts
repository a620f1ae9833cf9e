// Parameterised statements run prepared on both backends (on PGlite through PgliteStatements):
// the rows must be what the same statement gives unprepared, errors must carry their codes and
// leave the session usable, and transactions must still isolate and roll back.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { openTestDb } from '@trellis/store/testing';
import type { Db } from '@trellis/store';

let db: Db;
let cleanup: () => Promise<void>;

before(async () => {
  ({ db, cleanup } = await openTestDb('prepared_values'));
  await db.exec(`CREATE TABLE typed (id bigint PRIMARY KEY, at timestamptz, doc jsonb, raw bytea, flag boolean, tags text[], note text);
    INSERT INTO typed VALUES (1, '2026-11-27T10:00:00Z', '{"a": [1, "x"]}', '\\x00ff10', true, '{a,b}', NULL);`);
});
after(async () => cleanup());

test('rows of every type read prepared are the rows read unprepared', async () => {
  const unprepared = await db.query('SELECT * FROM typed WHERE id = 1');
  for (let i = 0; i < 3; i += 1) assert.deepEqual(await db.query('SELECT * FROM typed WHERE id = $1', [1]), unprepared);
  assert.equal((unprepared[0] as { at: unknown }).at instanceof Date, true);
});

test('parameters of every type are written as an unprepared statement writes them', async () => {
  const at = new Date('2026-11-27T11:00:00.123Z');
  await db.query('INSERT INTO typed (id, at, doc, raw, flag, tags, note) VALUES ($1, $2, $3::jsonb, $4, $5, $6, $7)', [2, at, JSON.stringify({ b: null }), Buffer.from([1, 2, 3]), false, ['x', 'y z'], null]);
  const [row] = await db.query<{ id: number; at: Date; doc: unknown; raw: Uint8Array; flag: boolean; tags: string[]; note: null }>('SELECT * FROM typed WHERE id = 2');
  assert.deepEqual([row?.id, row?.at.getTime(), row?.doc, [...(row?.raw ?? [])], row?.flag, row?.tags, row?.note], [2, at.getTime(), { b: null }, [1, 2, 3], false, ['x', 'y z'], null]);
});

test('a failing statement throws its code and the next statement runs', async () => {
  await assert.rejects(db.query('INSERT INTO typed (id) VALUES ($1)', [1]), (error: Error & { code?: string }) => error.code === '23505');
  await assert.rejects(db.query('SELECT $1::int / 0', [1]), (error: Error & { code?: string }) => error.code === '22012');
  await assert.rejects(db.query('SELECT $1::int AS n', ['x']), (error: Error & { code?: string }) => error.code === '22P02', 'refused as its value is bound');
  await assert.rejects(db.query('SELEC $1::int AS n', [1]), (error: Error & { code?: string }) => error.code === '42601', 'refused as it is prepared');
  assert.deepEqual(await db.query('SELECT id FROM typed WHERE id = $1', [1]), [{ id: 1 }]);
});

test('prepared statements in a transaction roll back with it, and a statement outside waits for its end', async () => {
  let outside: Promise<unknown> | undefined;
  await assert.rejects(
    db.transaction(async (tx) => {
      await tx.query('INSERT INTO typed (id, note) VALUES ($1, $2)', [3, 'in tx']);
      outside = db.query('SELECT count(*)::int AS n FROM typed WHERE id = $1', [3]);
      await tx.query('INSERT INTO typed (id) VALUES ($1)', [1]);
    }),
    (error: Error & { code?: string }) => error.code === '23505',
  );
  assert.deepEqual(await outside, [{ n: 0 }], 'it saw the table as the rolled-back transaction left it');
  assert.deepEqual(await db.query('SELECT count(*)::int AS n FROM typed WHERE id = $1', [3]), [{ n: 0 }]);
});

test('a statement is prepared once in a session, whatever its values', async () => {
  const sql = 'SELECT note FROM typed WHERE id = $1 AND note IS DISTINCT FROM $2';
  // One transaction: one session on PostgreSQL too, whose pool has a prepared copy per connection.
  const kept = await db.transaction(async (tx) => {
    for (let i = 0; i < 5; i += 1) await tx.query(sql, [i, 'v']);
    return tx.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement = $1', [sql]);
  });
  assert.deepEqual(kept, [{ n: 1 }]);
});
