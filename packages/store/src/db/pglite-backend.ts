import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { DataDirInUseError } from './data-dir-in-use.js';
import { CAPABILITIES, type Db, type Queryable } from './types.js';


function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Two processes opening one PGlite directory corrupt it, so the directory is taken with a
 * lock file holding the owner's PID. A lock left by a dead process is taken over.
 */
function takeLock(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, 'trellis.lock');
  try {
    writeFileSync(path, String(process.pid), { flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const owner = Number(readFileSync(path, 'utf8').trim());
    if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isAlive(owner)) throw new DataDirInUseError(dataDir, owner);
    writeFileSync(path, String(process.pid));
  }
  return () => rmSync(path, { force: true });
}

/**
 * PostgreSQL's default 128 MB of shared buffers live in PGlite's WebAssembly memory, and the pages
 * it touches stay resident for the life of the process (an idle coordinator reopening its data
 * directory held 339 MB with them, 217 MB with 16 MB). An embedded coordinator's working set is
 * small, and a page that is not buffered is one read from the operating system's cache.
 */
const START_PARAMS = [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'];

/** Embedded PostgreSQL under `<dataDir>/pgdata`, or in memory when no directory is given (tests). */
export async function openPglite(dataDir: string | undefined): Promise<Db> {
  const release = dataDir !== undefined ? takeLock(dataDir) : () => undefined;
  let db: PGlite;
  try {
    db = await PGlite.create({ ...(dataDir !== undefined ? { dataDir: join(dataDir, 'pgdata') } : {}), startParams: START_PARAMS });
  } catch (error) {
    release();
    throw error;
  }
  const query = async <T>(sql: string, params?: unknown[]): Promise<T[]> => (await db.query<T>(sql, params)).rows;
  return {
    capabilities: CAPABILITIES.pglite,
    query,
    exec: async (sql) => {
      await db.exec(sql);
    },
    transaction: <T>(fn: (tx: Queryable) => Promise<T>): Promise<T> =>
      db.transaction(async (tx) => fn({ query: async <R>(sql: string, params?: unknown[]) => (await tx.query<R>(sql, params)).rows })),
    close: async () => {
      await db.close();
      release();
    },
  };
}
