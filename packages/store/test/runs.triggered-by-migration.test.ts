// Migration 0017 on a database that already holds runs (PGlite, or PostgreSQL when
// TRELLIS_TEST_DATABASE_URL is set): runs from before it were started without auth, so they
// say anonymous, and scheduled run trees say scheduler; a new run must name its starter.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RunStatus } from '@trellis/core';
import { getRun, migrate, type TriggeredBy } from '@trellis/store';
import { openTestDb } from '@trellis/store/testing';

test('0017: old runs become anonymous or scheduler (sub-runs of a scheduled root too); the column has no default after', async () => {
  const { db, cleanup } = await openTestDb('runs_triggered_by_migration');
  try {
    // Back to the schema before 0017, with runs in it as the older code wrote them.
    await db.query('ALTER TABLE runs DROP COLUMN triggered_by');
    await db.query('DELETE FROM schema_migrations WHERE version = 17');
    await db.query("INSERT INTO dag_specs (hash, yaml) VALUES ('h', 'steps: [true]')");
    const insert = `INSERT INTO runs (dag_name, dag_run_id, root_dag_run_name, root_dag_run_id, parent_dag_run_name, parent_dag_run_id, attempt_id, status, queue_name, spec_hash, trigger)
      VALUES ($1, $2, $3, $4, $5, $6, 'a', ${RunStatus.Success}, $1, 'h', $7)`;
    await db.query(insert, ['nightly', 's1', 'nightly', 's1', '', '', 'schedule']);
    await db.query(insert, ['leaf', 'c1', 'nightly', 's1', 'nightly', 's1', 'sub']);
    await db.query(insert, ['etl', 'm1', 'etl', 'm1', '', '', 'manual']);
    await db.query(insert, ['leaf', 'c2', 'etl', 'm1', 'etl', 'm1', 'sub']);
    assert.deepEqual(await migrate(db), [17]);
    const scheduler: TriggeredBy = { kind: 'scheduler', id: 'scheduler', name: 'scheduler' };
    const anonymous: TriggeredBy = { kind: 'anonymous', id: 'anonymous', name: 'anonymous' };
    assert.deepEqual((await getRun(db, 'nightly', 's1'))?.triggeredBy, scheduler);
    assert.deepEqual((await getRun(db, 'leaf', 'c1'))?.triggeredBy, scheduler);
    assert.deepEqual((await getRun(db, 'etl', 'm1'))?.triggeredBy, anonymous);
    assert.deepEqual((await getRun(db, 'leaf', 'c2'))?.triggeredBy, anonymous);
    await assert.rejects(db.query(insert, ['etl', 'm2', 'etl', 'm2', '', '', 'manual']), /triggered_by/, 'a run that names no starter is refused');
  } finally {
    await cleanup();
  }
});
