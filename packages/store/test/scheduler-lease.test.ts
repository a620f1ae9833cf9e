import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { acquireSchedulerLease, holdsSchedulerLease, releaseSchedulerLease, type Db } from '@trellis/store';
import { openTestDb } from '@trellis/store/testing';

let db: Db;
let cleanup: () => Promise<void>;

before(async () => {
  ({ db, cleanup } = await openTestDb('scheduler_lease'));
});
after(async () => cleanup());

describe('scheduler lease', () => {
  test('one holder at a time; renewal keeps the token; a new holder after expiry gets the next token and fences the old one', async () => {
    const a = await acquireSchedulerLease(db, 'a', 5000);
    assert.equal(a, 1);
    assert.equal(await acquireSchedulerLease(db, 'b', 5000), undefined, 'b waits while a holds a live lease');
    // The renewal shortens the lease so that it runs out within the test.
    assert.equal(await acquireSchedulerLease(db, 'a', 200), 1, 'renewal keeps the token');
    await new Promise((r) => setTimeout(r, 400));
    const b = await acquireSchedulerLease(db, 'b', 5000);
    assert.equal(b, 2);
    assert.equal(await db.transaction((tx) => holdsSchedulerLease(tx, 'a', 1)), false, 'the old leader is fenced');
    assert.equal(await db.transaction((tx) => holdsSchedulerLease(tx, 'b', 2)), true);
    assert.equal(await acquireSchedulerLease(db, 'a', 5000), undefined);
    await releaseSchedulerLease(db, 'b');
    assert.equal(await acquireSchedulerLease(db, 'a', 5000), 3, 'a released lease is free at once');
  });
});
