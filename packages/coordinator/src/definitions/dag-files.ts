import { mkdir, readdir, readFile, rename, rm, stat, writeFile, open } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { dagFileNameOf } from '@trellis/core';

/** DAG definition files: `<dagsDir>/<fileName>.yaml` (a `.yml` file is read too). */
export class DagFiles {
  constructor(readonly dir: string) {}

  async ensureDir(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
  }

  /** File names (without extension) of every definition, sorted. `.yaml` wins over `.yml`. */
  async list(): Promise<string[]> {
    let entries: string[];
    try {
      entries = await readdir(this.dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const names = new Set<string>();
    for (const entry of entries) {
      const name = dagFileNameOf(entry);
      if (name !== undefined) names.add(name);
    }
    return [...names].sort();
  }

  async pathOf(fileName: string): Promise<string | undefined> {
    for (const ext of ['.yaml', '.yml']) {
      const path = join(this.dir, fileName + ext);
      try {
        await stat(path);
        return path;
      } catch {
        // try the next extension
      }
    }
    return undefined;
  }

  async read(fileName: string): Promise<{ text: string; mtimeMs: number } | undefined> {
    const path = await this.pathOf(fileName);
    if (path === undefined) return undefined;
    try {
      const [text, info] = await Promise.all([readFile(path, 'utf8'), stat(path)]);
      return { text, mtimeMs: info.mtimeMs };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  /** Writes through a temporary file and a rename, so a reader (or a crash) never sees half a file. */
  async write(fileName: string, text: string): Promise<void> {
    await this.ensureDir();
    const target = (await this.pathOf(fileName)) ?? join(this.dir, `${fileName}.yaml`);
    const temp = join(this.dir, `.${fileName}.${randomBytes(4).toString('hex')}.tmp`);
    const handle = await open(temp, 'w');
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, target);
  }

  /** Creates the file only if no definition of that name exists; false when one does. */
  async create(fileName: string, text: string): Promise<boolean> {
    await this.ensureDir();
    if ((await this.pathOf(fileName)) !== undefined) return false;
    try {
      await writeFile(join(this.dir, `${fileName}.yaml`), text, { flag: 'wx' });
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw error;
    }
  }

  async rename(from: string, to: string): Promise<void> {
    const source = await this.pathOf(from);
    if (source === undefined) throw Object.assign(new Error(`no definition ${from}`), { code: 'ENOENT' });
    await rename(source, join(this.dir, `${to}.yaml`));
  }

  async remove(fileName: string): Promise<boolean> {
    const path = await this.pathOf(fileName);
    if (path === undefined) return false;
    await rm(path, { force: true });
    return true;
  }
}
