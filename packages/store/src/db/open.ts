import { migrate } from '../migrations/index.js';
import type { Db } from './types.js';

export interface OpenDatabaseOptions {
  /** PostgreSQL server; absent means embedded PGlite. */
  databaseUrl?: string;
  /** Embedded data directory (PGlite); absent with no URL means in memory. */
  dataDir?: string;
  /** PostgreSQL schema to use (created if missing). */
  schema?: string;
  /**
   * Errors no statement waits for: an idle pooled connection's (PostgreSQL), or the embedded
   * database's thread stopping (PGlite), after which every statement fails.
   */
  onBackgroundError?: (error: Error) => void;
}

/** Opens the database and brings its schema up to date. */
export async function openDatabase(options: OpenDatabaseOptions): Promise<Db> {
  // Only the backend in use is loaded: PGlite's module, or pg's, would otherwise stay resident for nothing.
  const db =
    options.databaseUrl !== undefined
      ? await (await import('./pg-backend.js')).openPg({ connectionString: options.databaseUrl, ...(options.schema !== undefined ? { schema: options.schema } : {}), ...(options.onBackgroundError !== undefined ? { onError: options.onBackgroundError } : {}) })
      : await (await import('./pglite-backend.js')).openPglite(options.dataDir, options.onBackgroundError);
  try {
    await migrate(db);
  } catch (error) {
    await db.close();
    throw error;
  }
  return db;
}
