import { fork } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InternalError } from '@trellis/core';
import { DataDirInUseError } from './data-dir-in-use.js';
import { PgliteThread } from './pglite-client.js';
import { CAPABILITIES, type Db } from './types.js';

/** Where a new cluster is built before it is renamed to its place (see createCluster). */
const BUILDING_SUFFIX = '.building';

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

/** Why a new cluster cannot be put at `pgdata`, if it cannot: a file or another program's files are there. */
function unusableClusterDir(pgdata: string): string | undefined {
  if (!existsSync(pgdata)) return undefined;
  if (!statSync(pgdata).isDirectory()) return 'it is a file, not a directory';
  if (readdirSync(pgdata).length > 0) return 'it holds files but no database (no PG_VERSION); move them away to let a new one be made';
  return undefined;
}

/**
 * PGlite makes a new cluster by running initdb in a second, throwaway PGlite and copying its files
 * in as a tar image. Its WebAssembly memories, the image and the allocator's freed pages stay in
 * the process that did it (a bare open of a new directory held 733 MB, and 314 MB even after a full
 * collection, against 160 MB for reopening the same directory), so a short-lived child process
 * makes the cluster and the long-running one only ever opens an existing one. The caller holds
 * the directory's lock: the child works for it.
 *
 * The child builds in a sibling directory that is renamed into place once whole: a child killed
 * half-way (a host losing power, an operator's kill) would otherwise leave a `PG_VERSION` over a
 * broken cluster, which every later start would open as if it were whole.
 */
async function createCluster(pgdata: string): Promise<void> {
  if (existsSync(join(pgdata, 'PG_VERSION'))) return;
  const refusal = unusableClusterDir(pgdata);
  if (refusal !== undefined) throw new InternalError(`creating the embedded database in ${pgdata} failed: ${refusal}`);
  const building = `${pgdata}${BUILDING_SUFFIX}`;
  // What a killed child left is incomplete by construction; the lock says no one else builds it.
  rmSync(building, { recursive: true, force: true });
  // Same extension as this module: `.ts` when run from source, `.js` when built.
  const entry = fileURLToPath(new URL(`./pglite-initdb${extname(import.meta.url)}`, import.meta.url));
  const child = fork(entry, [building], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', resolve);
  });
  if (code !== 0) throw new InternalError(`creating the embedded database in ${pgdata} failed (exit ${String(code)}): ${stderr.trim()}`);
  rmSync(pgdata, { recursive: true, force: true });
  renameSync(building, pgdata);
}

/** Embedded PostgreSQL under `<dataDir>/pgdata`, or in memory when no directory is given (tests). */
export async function openPglite(dataDir: string | undefined, onError?: (error: Error) => void): Promise<Db> {
  let release = dataDir !== undefined ? takeLock(dataDir) : () => undefined;
  let thread: PgliteThread;
  try {
    const pgdata = dataDir !== undefined ? join(dataDir, 'pgdata') : undefined;
    if (pgdata !== undefined) await createCluster(pgdata);
    thread = await PgliteThread.start(pgdata, onError);
  } catch (error) {
    release();
    throw error;
  }
  return {
    capabilities: CAPABILITIES.pglite,
    query: <T>(sql: string, params?: unknown[]) => thread.query<T>(sql, params),
    exec: (sql) => thread.exec(sql),
    transaction: (fn) => thread.transaction(fn),
    close: async () => {
      try {
        await thread.close();
      } finally {
        // Once: a second close must not remove a lock another process has taken since.
        const releaseNow = release;
        release = () => undefined;
        releaseNow();
      }
    },
  };
}
