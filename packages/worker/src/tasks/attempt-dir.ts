import { readdirSync, rmdirSync, unlinkSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { TaskRef } from '@trellis/core';

/** Past this many entries the folder is removed off the event loop. */
const SYNC_REMOVE_LIMIT = 64;

/**
 * One flat folder per attempt, named by its attempt id (unique): removing it afterwards leaves
 * nothing behind, where a <dag>/<run>/<attempt> tree left two empty folders per run, and it
 * costs two directory creations and removals fewer per run.
 */
export function attemptDirOf(workDir: string, ref: TaskRef): string {
  return join(workDir, 'runs', ref.attemptId.replace(/[^A-Za-z0-9_-]/g, '_'));
}

/**
 * Removes an attempt's folder. The usual folder (a few log files and an empty work directory)
 * goes with a handful of synchronous calls: through the thread pool, each call costs several
 * times its own CPU on a small VM. Anything else (a work directory the steps filled, many
 * files) goes to the asynchronous recursive remove, so the event loop never waits on a tree.
 */
export async function removeAttemptDir(dir: string): Promise<void> {
  try {
    const entries = readdirSync(dir, { withFileTypes: true });
    if (entries.length > SYNC_REMOVE_LIMIT) throw new Error('large folder');
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) rmdirSync(path);
      else unlinkSync(path);
    }
    rmdirSync(dir);
  } catch {
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}
