import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fork, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { InternalError } from '@trellis/core';
import { DataDirInUseError, MIGRATIONS, migrate, openDatabase } from '@trellis/store';

const url = process.env.TRELLIS_TEST_DATABASE_URL;

test('migrations apply once; re-running is a no-op; an edited migration stops start-up', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-mig-'));
  try {
    const db = await openDatabase({ dataDir: dir });
    assert.deepEqual(await migrate(db), []);
    const rows = await db.query<{ version: number }>('SELECT version FROM schema_migrations');
    assert.deepEqual(rows.map((r) => r.version), MIGRATIONS.map((m) => m.version));
    await db.query("UPDATE schema_migrations SET checksum = 'tampered' WHERE version = 1");
    await assert.rejects(migrate(db), /was changed after it was applied/);
    await db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the embedded data directory is locked against a second live process', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-lock-'));
  try {
    const owner = spawn('sleep', ['30']);
    const pid = owner.pid ?? 0;
    writeFileSync(join(dir, 'trellis.lock'), String(pid));
    try {
      await assert.rejects(openDatabase({ dataDir: dir }), (e: unknown) => e instanceof DataDirInUseError && e.message.includes(String(pid)));
    } finally {
      owner.kill('SIGKILL');
      await new Promise((r) => owner.once('exit', r));
    }
    // A lock left by a process that is gone is taken over.
    writeFileSync(join(dir, 'trellis.lock'), String(spawnSync('true').pid));
    const db = await openDatabase({ dataDir: dir });
    await db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a new embedded data directory is made by a child process and keeps what is written; a failure to make it releases the lock', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-initdb-'));
  try {
    const db = await openDatabase({ dataDir: dir });
    assert.ok(existsSync(join(dir, 'pgdata', 'PG_VERSION')));
    await db.exec('CREATE TABLE kept (v int); INSERT INTO kept VALUES (7)');
    await db.close();
    const reopened = await openDatabase({ dataDir: dir });
    assert.deepEqual(await reopened.query('SELECT v FROM kept'), [{ v: 7 }]);
    await reopened.close();

    const broken = mkdtempSync(join(tmpdir(), 'trellis-initdb-'));
    try {
      // A file where the cluster's directory should be: the child cannot make it.
      writeFileSync(join(broken, 'pgdata'), '');
      await assert.rejects(openDatabase({ dataDir: broken }), (e: unknown) => e instanceof InternalError && e.message.includes('creating the embedded database'));
      assert.equal(existsSync(join(broken, 'trellis.lock')), false);
    } finally {
      rmSync(broken, { recursive: true, force: true });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a cluster whose making was cut short is made again, never opened half-made; a directory of other files is refused', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-initdb-'));
  try {
    // The child that makes the cluster, killed once it has begun writing: as if the host lost power.
    const building = join(dir, 'pgdata.building');
    const child = fork(fileURLToPath(new URL('../src/db/pglite-initdb.ts', import.meta.url)), [building], { stdio: 'ignore' });
    let running = true;
    const exited = once(child, 'exit').finally(() => (running = false));
    while (running && !existsSync(join(building, 'base'))) await delay(5);
    assert.ok(running, 'the child began writing the cluster before it ended');
    child.kill('SIGKILL');
    await exited;
    assert.equal(existsSync(join(dir, 'pgdata')), false, 'nothing is put in place before the cluster is whole');

    const db = await openDatabase({ dataDir: dir });
    await db.exec('CREATE TABLE kept (v int); INSERT INTO kept VALUES (1)');
    assert.deepEqual(await db.query('SELECT v FROM kept'), [{ v: 1 }]);
    await db.close();
    assert.equal(existsSync(building), false);

    const foreign = mkdtempSync(join(tmpdir(), 'trellis-initdb-'));
    try {
      mkdirSync(join(foreign, 'pgdata'));
      writeFileSync(join(foreign, 'pgdata', 'notes.txt'), 'not a database');
      await assert.rejects(openDatabase({ dataDir: foreign }), (e: unknown) => e instanceof InternalError && e.message.includes('no PG_VERSION'));
      assert.equal(readFileSync(join(foreign, 'pgdata', 'notes.txt'), 'utf8'), 'not a database');
    } finally {
      rmSync(foreign, { recursive: true, force: true });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// Only a PostgreSQL server has concurrent sessions to race; CI's PostgreSQL pass runs this.
if (url !== undefined) test('two coordinators migrating one PostgreSQL schema at once apply each migration once', async () => {
  const schema = `t_mig_${randomBytes(4).toString('hex')}`;
  try {
    const [a, b] = await Promise.all([openDatabase({ databaseUrl: url, schema }), openDatabase({ databaseUrl: url, schema })]);
    const rows = await a.query<{ n: number }>('SELECT count(*)::int AS n FROM schema_migrations');
    assert.equal(rows[0]?.n, MIGRATIONS.length);
    await Promise.all([a.close(), b.close()]);
  } finally {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  }
});
