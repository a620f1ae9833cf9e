import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { openDatabase } from './db/open.js';
import type { Db } from './db/types.js';
import { MIGRATIONS } from './migrations/index.js';

/**
 * Where the PGlite clusters of tests are copied from: one made and migrated per PGlite version
 * and set of migrations, per user. PGlite's initdb takes seconds of CPU (5 s on a quiet 2-core
 * machine, three times that with a second suite beside it); copying its 40 MB takes a quarter
 * of a second, and test files open some 70 of them.
 */
async function pgliteTemplate(): Promise<string> {
  // Loaded here, not at the top: tests on a PostgreSQL server never load PGlite.
  const { PGLITE_START_PARAMS } = await import('./db/pglite-settings.js');
  const pglite = JSON.parse(readFileSync(new URL('../package.json', import.meta.resolve('@electric-sql/pglite')), 'utf8')) as { version: string };
  const key = createHash('sha256').update(pglite.version).update(JSON.stringify(PGLITE_START_PARAMS)).update(JSON.stringify(MIGRATIONS)).digest('hex').slice(0, 16);
  const root = join(tmpdir(), `trellis-test-pglite-${process.getuid?.() ?? 'user'}`);
  const template = join(root, key);
  if (existsSync(join(template, 'PG_VERSION'))) return template;
  mkdirSync(root, { recursive: true, mode: 0o700 });
  const building = mkdtempSync(join(root, 'building-'));
  try {
    await (await openDatabase({ dataDir: building })).close();
    renameSync(join(building, 'pgdata'), template);
  } catch (error) {
    // Another test process put its template there first: the same cluster, so that one is used.
    if (!existsSync(join(template, 'PG_VERSION'))) throw error;
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
  return template;
}

/**
 * A fresh, migrated database for one test file: a new schema on the server named by
 * TRELLIS_TEST_DATABASE_URL (dropped by cleanup), else PGlite in a temporary directory.
 */
export async function openTestDb(label: string): Promise<{ db: Db; cleanup: () => Promise<void>; second?: () => Promise<Db> }> {
  const url = process.env.TRELLIS_TEST_DATABASE_URL;
  if (url !== undefined && url !== '') {
    const schema = `t_${label.replace(/[^a-z0-9_]/gi, '_').toLowerCase().slice(0, 30)}_${randomBytes(4).toString('hex')}`;
    const db = await openDatabase({ databaseUrl: url, schema });
    const others: Db[] = [];
    return {
      db,
      // A second pool on the same schema: what a second coordinator on the same database sees.
      second: async () => {
        const other = await openDatabase({ databaseUrl: url, schema });
        others.push(other);
        return other;
      },
      cleanup: async () => {
        await Promise.all(others.map((o) => o.close()));
        await db.close();
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await client.end();
      },
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'trellis-store-'));
  cpSync(await pgliteTemplate(), join(dir, 'pgdata'), { recursive: true });
  const db = await openDatabase({ dataDir: dir });
  return {
    db,
    cleanup: async () => {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export { openBenchDatabase, seedBenchRuns, sampleRuns, type BenchDatabase, type BenchDag, type BenchSeedOptions } from './runs/bench-seed.js';
export { startThrowawayCluster, type ThrowawayCluster } from './db/throwaway-cluster.js';
