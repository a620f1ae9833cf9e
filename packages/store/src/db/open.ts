import { openPg } from './pg-backend.js';
import { openPglite } from './pglite-backend.js';
import { migrate } from '../migrations/index.js';
import type { Db } from './types.js';

export interface OpenDatabaseOptions {
  /** PostgreSQL server; absent means embedded PGlite. */
  databaseUrl?: string;
  /** Embedded data directory (PGlite); absent with no URL means in memory. */
  dataDir?: string;
  /** PostgreSQL schema to use (created if missing). */
  schema?: string;
  onPoolError?: (error: Error) => void;
}

/** Opens the database and brings its schema up to date. */
export async function openDatabase(options: OpenDatabaseOptions): Promise<Db> {
  const db =
    options.databaseUrl !== undefined
      ? await openPg({ connectionString: options.databaseUrl, ...(options.schema !== undefined ? { schema: options.schema } : {}), ...(options.onPoolError !== undefined ? { onError: options.onPoolError } : {}) })
      : await openPglite(options.dataDir);
  try {
    await migrate(db);
  } catch (error) {
    await db.close();
    throw error;
  }
  return db;
}
