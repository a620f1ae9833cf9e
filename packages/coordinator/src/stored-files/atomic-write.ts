import { link, mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';

/** Writes `text` to a new temporary file beside `path` and syncs it: the slow part of an atomic write. */
async function preparedBeside(path: string, text: string): Promise<string> {
  await mkdir(dirname(path), { recursive: true });
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(4).toString('hex')}.tmp`);
  const handle = await open(temp, 'w');
  try {
    await handle.writeFile(text, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  return temp;
}

/** Writes through a temporary file and a rename, so a reader (or a crash) never sees half a file. */
export async function writeAtomically(path: string, text: string): Promise<void> {
  await rename(await preparedBeside(path, text), path);
}

async function textOf(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Writes atomically unless the file changed since the caller looked: `unchanged` sees the file's
 * text (undefined: no file) once the temporary file is written and synced, just before it takes
 * the file's place. A mirror that checked only before its write lost a hand edit made during the
 * write's fsync (tens of milliseconds on a busy disk). A missing file is created by a hard link,
 * which fails when one appeared after the check. Resolves to whether the file was written.
 */
export async function writeUnlessChanged(path: string, text: string, unchanged: (current: string | undefined) => boolean): Promise<boolean> {
  const temp = await preparedBeside(path, text);
  try {
    const current = await textOf(path);
    if (!unchanged(current)) return false;
    if (current !== undefined) {
      await rename(temp, path);
      return true;
    }
    try {
      await link(temp, path);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw error;
    }
  } finally {
    await rm(temp, { force: true });
  }
}
