import { readdirSync, unlinkSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';

/** Past this many entries a folder is emptied off the event loop. */
const SYNC_CLEAN_LIMIT = 64;

/**
 * Empties an attempt's folder and keeps it, with its empty `work` directory, for reuse. The
 * usual folder (a few log files, an empty work directory) takes a few synchronous unlinks;
 * anything else (a work tree the steps filled, many files) is removed whole by the async
 * recursive rm, so the event loop never waits on a tree. False when the folder is gone.
 */
async function emptyForReuse(dir: string): Promise<boolean> {
  try {
    const entries = readdirSync(dir, { withFileTypes: true });
    if (entries.length > SYNC_CLEAN_LIMIT) throw new Error('large folder');
    for (const entry of entries) {
      if (!entry.isDirectory()) unlinkSync(join(dir, entry.name));
      else if (entry.name !== 'work' || readdirSync(join(dir, entry.name)).length > 0) throw new Error('filled folder');
    }
    return true;
  } catch {
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    return false;
  }
}

/**
 * The folders attempts run in, under `<work dir>/runs`. On this kind of disk creating and
 * removing a directory costs about 0.2-0.3 ms each, and an attempt needs two (its folder and
 * the engine's work directory inside), so a finished attempt's folder is emptied and handed
 * to the next one instead. The pool holds at most `keep` idle folders; the rest are removed.
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
