import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openDatabase } from './db/open.js';
import type { Db } from './db/types.js';

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
