import { watch } from 'node:fs';
import { readdir, readFile, rm, rmdir, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import type { MirrorFiles } from '../stored-files/directory-mirror.js';
import { writeAtomically } from '../stored-files/atomic-write.js';
import { isValidDocumentId } from './document-id.js';

/** Documents as files: `<docsDir>/<id>.md`, in subdirectories for ids with `/`. Other files are not documents. */
export class DocFiles implements MirrorFiles {
  readonly manifestPath: string;

  constructor(readonly root: string) {
    this.manifestPath = join(root, '.trellis-mirror.json');
  }

  /** The document id of a path under the directory, or undefined when it names no document. */
  idOf(relativePath: string): string | undefined {
    if (!relativePath.endsWith('.md')) return undefined;
    const id = relativePath.slice(0, -'.md'.length).split(sep).join('/');
    return isValidDocumentId(id) ? id : undefined;
  }

  async list(): Promise<string[]> {
    let entries: string[];
    try {
      entries = await readdir(this.root, { recursive: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    return entries.flatMap((entry) => this.idOf(entry) ?? []).sort();
  }

  async read(id: string): Promise<{ text: string; mtimeMs: number } | undefined> {
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

  async write(id: string, text: string): Promise<void> {
    await writeAtomically(this.pathOf(id), text);
  }

  /** Removes the file and the parent directories it leaves empty (never the docs directory itself). */
  async remove(id: string): Promise<void> {
    const path = this.pathOf(id);
    await rm(path, { force: true });
    for (let dir = dirname(path); relative(this.root, dir) !== '' && !relative(this.root, dir).startsWith('..'); dir = dirname(dir)) {
      try {
        await rmdir(dir);
      } catch {
        // not empty (or already gone): the directories above stay too
        return;
      }
    }
  }

  /** Watches the whole tree: files written by runs under `DAG_DOCS_DIR` (`<docsDir>/<dag name>/...`) are documents too. */
  watch(onName: (id: string) => void): (() => void) | undefined {
    const watcher = watch(this.root, { recursive: true }, (_event, name) => {
      const id = name !== null ? this.idOf(name) : undefined;
      if (id !== undefined) onName(id);
    });
    watcher.on('error', () => watcher.close());
    return () => watcher.close();
  }

  /** Only a valid id becomes a path: its segments cannot be `.`, `..` or absolute, so the path stays under the root. */
  private pathOf(id: string): string {
    if (!isValidDocumentId(id)) throw new Error(`not a document id: ${id}`);
    return join(this.root, ...id.split('/')) + '.md';
  }
}
