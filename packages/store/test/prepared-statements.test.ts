import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openTestDb } from '@trellis/store/testing';

// On PostgreSQL parameterised statements are prepared once per connection; a table altered
// under them (another coordinator migrating the schema) must not break the next call.
test('a statement keeps working after its table changes shape under it', async () => {
  const { db, cleanup } = await openTestDb('prepared');
  try {
    await db.exec('CREATE TABLE probe (id int PRIMARY KEY, name text); INSERT INTO probe VALUES (1, $$one$$);');
    const select = (): Promise<Array<Record<string, unknown>>> => db.query('SELECT * FROM probe WHERE id = $1', [1]);
    // Concurrent calls: every pooled connection prepares the statement.
    for (const rows of await Promise.all(Array.from({ length: 12 }, select))) assert.deepEqual(rows, [{ id: 1, name: 'one' }]);
    await db.exec('ALTER TABLE probe ADD COLUMN extra int NOT NULL DEFAULT 7');
    for (const rows of await Promise.all(Array.from({ length: 12 }, select))) assert.deepEqual(rows, [{ id: 1, name: 'one', extra: 7 }]);
    assert.deepEqual(await db.transaction((tx) => tx.query('SELECT name FROM probe WHERE id = $1', [1])), [{ name: 'one' }]);
  } finally {
    await cleanup();
  }
});
