import { watch } from 'node:fs';
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { dagFileNameOf } from '@trellis/core';
import type { MirrorFiles } from '../stored-files/directory-mirror.js';
import { writeUnlessChanged } from '../stored-files/atomic-write.js';
import { RestartingWatch, type WatchDirectory } from '../stored-files/restarting-watch.js';

/** DAG definition files: `<dagsDir>/<fileName>.yaml` (a `.yml` file is read too); the database's mirror. */
export class DagFiles implements MirrorFiles {
  readonly manifestPath: string;

  constructor(
    readonly root: string,
    private readonly watchDirectory: WatchDirectory = (dir, listener) => watch(dir, listener),
  ) {
    this.manifestPath = join(root, '.trellis-mirror.json');
  }

  /** File names (without extension) of every definition, sorted. `.yaml` wins over `.yml`. */
  async list(): Promise<string[]> {
    let entries: string[];
    try {
      entries = await readdir(this.root);
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
      const path = join(this.root, fileName + ext);
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

  /** Replaces the file (`.yml` stays `.yml`), or creates `<fileName>.yaml`. */
  async write(fileName: string, text: string, unchanged: (current: string | undefined) => boolean): Promise<boolean> {
    return writeUnlessChanged((await this.pathOf(fileName)) ?? join(this.root, `${fileName}.yaml`), text, unchanged);
  }

  async remove(fileName: string): Promise<void> {
    const path = await this.pathOf(fileName);
    if (path !== undefined) await rm(path, { force: true });
  }

  /** A watch that stopped on an error starts again, and every definition is looked at again for what it missed. */
  watch(onName: (fileName: string) => void): (() => void) | undefined {
    const restarting = new RestartingWatch(
      () =>
        this.watchDirectory(this.root, (_event, name) => {
          const fileName = name !== null ? dagFileNameOf(name) : undefined;
          if (fileName !== undefined) onName(fileName);
        }),
      () => void this.list().then((names) => names.forEach(onName), () => undefined),
    );
    return () => restarting.stop();
  }
}
