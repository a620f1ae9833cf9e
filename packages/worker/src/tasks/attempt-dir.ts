import { closeSync, constants, fstatSync, ftruncateSync, openSync, readdirSync, unlinkSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';

/** Past this many entries a folder is emptied off the event loop. */
const SYNC_CLEAN_LIMIT = 64;

/**
 * Truncates a regular file without following a link a step may have put in its place (this
 * process may run as root; truncating a link's target would damage another file).
 */
function truncateInPlace(path: string): void {
  const fd = openSync(path, constants.O_WRONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    if (!fstatSync(fd).isFile()) throw new Error('not a regular file');
    ftruncateSync(fd, 0);
  } finally {
    closeSync(fd);
  }
}

/**
 * Empties an attempt's folder and keeps it, with its empty `work` directory, for reuse. The
 * usual folder (a few log files, an empty work directory) keeps its files, truncated: the next
 * attempt's engine reopens them instead of creating new ones (see AttemptFolders for why).
 * Anything else (a work tree the steps filled, many files) is removed whole by the async
 * recursive rm, so the event loop never waits on a tree. False when the folder is gone.
 */
async function emptyForReuse(dir: string): Promise<boolean> {
  try {
    const entries = readdirSync(dir, { withFileTypes: true });
    if (entries.length > SYNC_CLEAN_LIMIT) throw new Error('large folder');
    for (const entry of entries) {
      if (entry.isFile()) truncateInPlace(join(dir, entry.name));
      else if (!entry.isDirectory()) unlinkSync(join(dir, entry.name));
      else if (entry.name !== 'work' || readdirSync(join(dir, entry.name)).length > 0) throw new Error('filled folder');
    }
    return true;
  } catch {
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    return false;
  }
}

/**
 * The folders attempts run in, under `<work dir>/runs`. Creating a file or directory is the
 * expensive part of a short attempt: ext4 without a journal skips every inode deleted in the
 * last minutes when it allocates one (`recently_deleted`), so under a steady churn of attempts
 * each create costs 0.1-0.9 ms of kernel CPU (measured on this VM) while reopening and
 * truncating an existing file costs about 20 us. A finished attempt's folder, log files
 * included, is therefore emptied in place and handed to the next one. The pool holds at most
 * `keep` idle folders; the rest are removed.
 * A new process starts by removing whatever an earlier one left behind.
 */
export class AttemptFolders {
  private readonly idle: string[] = [];
  private next = 0;
  private readonly root: string;

  constructor(workDir: string, private readonly keep: number) {
    this.root = join(workDir, 'runs');
  }

  /** Removes folders a previous process left (crash, kill -9): their runs are over. */
  async clearLeftovers(): Promise<void> {
    await rm(this.root, { recursive: true, force: true }).catch(() => undefined);
  }

  /** A folder for a new attempt: an emptied one, or a new name the engine will create. */
  take(): string {
    return this.idle.pop() ?? join(this.root, `a${process.pid}-${(this.next += 1)}`);
  }

  /** The attempt is over and its reports delivered: empty the folder and keep it, or remove it. */
  async release(dir: string): Promise<void> {
    if (this.idle.length >= this.keep) {
      await rm(dir, { recursive: true, force: true }).catch(() => undefined);
      return;
    }
    if (await emptyForReuse(dir)) this.idle.push(dir);
  }
}
