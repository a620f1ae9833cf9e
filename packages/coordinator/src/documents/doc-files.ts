import { watch } from 'node:fs';
import { lstat, readdir, readFile, realpath, rm, rmdir, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import type { MirrorFiles } from '../stored-files/directory-mirror.js';
import { writeUnlessChanged } from '../stored-files/atomic-write.js';
import { RestartingWatch, type WatchDirectory } from '../stored-files/restarting-watch.js';
import { isValidDocumentId } from './document-id.js';

/** When, after a directory event, its files are listed (see `watch`): soon, and again on a busy machine. */
const NEW_DIRECTORY_RESCANS_MS = [150, 1000];

/** Whether `path` is `root` or below it (both already resolved). */
function isWithin(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !rel.startsWith(sep));
}

/**
 * Documents as files: `<docsDir>/<id>.md`, in subdirectories for ids with `/`. Other files are
 * not documents. A valid id cannot climb out of the directory by its text; a symbolic link in
 * the directory could, so every read, write and delete first checks where the path resolves.
 */
export class DocFiles implements MirrorFiles {
  readonly manifestPath: string;

  constructor(
    readonly root: string,
    /** Starts the recursive watch of the tree; a test hands in one whose watcher it can fail. */
    private readonly watchTree: WatchDirectory = (dir, listener) => watch(dir, { recursive: true }, listener),
  ) {
    this.manifestPath = join(root, '.trellis-mirror.json');
  }

  /** The document id of a path under the directory, or undefined when it names no document. */
  idOf(relativePath: string): string | undefined {
    if (!relativePath.endsWith('.md')) return undefined;
    const id = relativePath.slice(0, -'.md'.length).split(sep).join('/');
    return isValidDocumentId(id) ? id : undefined;
  }

  /** Every document file; linked directories are not entered (they may lead anywhere). */
  async list(): Promise<string[]> {
    const ids: string[] = [];
    const pending = [''];
    for (let dir = pending.pop(); dir !== undefined; dir = pending.pop()) {
      let entries;
      try {
        entries = await readdir(join(this.root, dir), { withFileTypes: true });
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' || code === 'ENOTDIR') continue;
        throw error;
      }
      for (const entry of entries) {
        const path = dir === '' ? entry.name : join(dir, entry.name);
        if (entry.isDirectory()) pending.push(path);
        else if (entry.isFile() || entry.isSymbolicLink()) {
          const id = this.idOf(path);
          if (id !== undefined) ids.push(id);
        }
      }
    }
    return ids.sort();
  }

  /**
   * Whether the document's path resolves under the directory, symbolic links followed: the
   * path itself when it exists, else its nearest existing parent (where a write would land).
   * A link that leads nowhere is not confined: a write through it would create its target; nor
   * is a path the file system cannot hold (a segment longer than a file name may be).
   */
  async confined(id: string): Promise<boolean> {
    let root: string;
    try {
      root = await realpath(this.root);
    } catch {
      // No directory yet: nothing in it can lead out.
      return true;
    }
    let probe = this.pathOf(id);
    for (;;) {
      try {
        return isWithin(root, await realpath(probe));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return false;
        const info = await lstat(probe).catch(() => undefined);
        if (info?.isSymbolicLink() === true) return false;
        // Absent: its parent decides. (Present now: written meanwhile, look again.)
        if (info === undefined) probe = dirname(probe);
        if (!isWithin(this.root, probe)) return false;
      }
    }
  }

  async read(id: string): Promise<{ text: string; mtimeMs: number } | undefined> {
    if (!(await this.confined(id))) return undefined;
    const path = this.pathOf(id);
    try {
      const [text, info] = await Promise.all([readFile(path, 'utf8'), stat(path)]);
      return { text, mtimeMs: info.mtimeMs };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'EISDIR' || code === 'ENOTDIR') return undefined;
      throw error;
    }
  }

  async write(id: string, text: string, unchanged: (current: string | undefined) => boolean): Promise<boolean> {
    await this.requireConfined(id);
    return writeUnlessChanged(this.pathOf(id), text, unchanged);
  }

  /** Removes the file and the parent directories it leaves empty (never the docs directory itself). */
  async remove(id: string): Promise<void> {
    await this.requireConfined(id);
    const path = this.pathOf(id);
    await rm(path, { force: true });
    for (let dir = dirname(path); relative(this.root, dir) !== '' && isWithin(this.root, dir); dir = dirname(dir)) {
      try {
        await rmdir(dir);
      } catch {
        // not empty (or already gone): the directories above stay too
        return;
      }
    }
  }

  /**
   * Watches the whole tree: files written by runs under `DAG_DOCS_DIR` (`<docsDir>/<dag name>/...`)
   * are documents too. Node's recursive watch (Linux) stops with an error when a directory goes
   * away while it reads it (a deleted document's emptied directory, a run cleaning up): a new
   * watch then starts, and every document is looked at again for the changes it missed.
   */
  watch(onName: (id: string) => void): (() => void) | undefined {
    const restarting: RestartingWatch = new RestartingWatch(
      () =>
        this.watchTree(this.root, (_event, name) => {
          if (name === null) return;
          const id = this.idOf(name);
          if (id !== undefined) {
            onName(id);
            return;
          }
          // Node's recursive watch adds a new directory's own watch a moment after it appears, so
          // files written into it at once raise no event: look into the directory a little later.
          for (const delay of NEW_DIRECTORY_RESCANS_MS) restarting.later(delay, () => void this.idsUnder(name).then((ids) => ids.forEach(onName), () => undefined));
        }),
      () => void this.list().then((ids) => ids.forEach(onName), () => undefined),
    );
    return () => restarting.stop();
  }

  /** The documents under a relative path that is a real directory (not a link); none otherwise. */
  private async idsUnder(relativeDir: string): Promise<string[]> {
    const info = await lstat(join(this.root, relativeDir)).catch(() => undefined);
    if (info === undefined || !info.isDirectory()) return [];
    const prefix = `${relativeDir.split(sep).join('/')}/`;
    return (await this.list()).filter((id) => id.startsWith(prefix));
  }

  private async requireConfined(id: string): Promise<void> {
    if (!(await this.confined(id))) throw new Error(`document ${id} resolves outside the docs directory ${this.root} (a symbolic link): left alone`);
  }

  /** Only a valid id becomes a path: its segments cannot be `.`, `..` or absolute, so the text stays under the root. */
  private pathOf(id: string): string {
    if (!isValidDocumentId(id)) throw new Error(`not a document id: ${id}`);
    return join(this.root, ...id.split('/')) + '.md';
  }
}
