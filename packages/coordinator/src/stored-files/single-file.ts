import { watch } from 'node:fs';
import { readFile, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { MirrorFiles } from './directory-mirror.js';
import { writeUnlessChanged } from './atomic-write.js';
import { RestartingWatch, type WatchDirectory } from './restarting-watch.js';

/** One file mirroring the single stored file of a kind (the base configuration), under the name `name`. */
export class SingleFile implements MirrorFiles {
  readonly root: string;
  readonly manifestPath: string;

  constructor(
    private readonly path: string,
    private readonly name: string,
    private readonly watchDirectory: WatchDirectory = (dir, listener) => watch(dir, listener),
  ) {
    this.root = dirname(path);
    this.manifestPath = join(this.root, `.${basename(path)}.trellis-mirror.json`);
  }

  async list(): Promise<string[]> {
    return (await this.read(this.name)) !== undefined ? [this.name] : [];
  }

  async read(name: string): Promise<{ text: string; mtimeMs: number } | undefined> {
    if (name !== this.name) return undefined;
    try {
      const [text, info] = await Promise.all([readFile(this.path, 'utf8'), stat(this.path)]);
      return { text, mtimeMs: info.mtimeMs };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  async write(name: string, text: string, unchanged: (current: string | undefined) => boolean): Promise<boolean> {
    return name === this.name && writeUnlessChanged(this.path, text, unchanged);
  }

  async remove(name: string): Promise<void> {
    if (name === this.name) await rm(this.path, { force: true });
  }

  /** Watches the file's directory (an editor replaces the file, which ends a watch of the file itself); a watch that stopped on an error starts again. */
  watch(onName: (name: string) => void): (() => void) | undefined {
    const file = basename(this.path);
    const restarting = new RestartingWatch(
      () =>
        this.watchDirectory(this.root, (_event, changed) => {
          if (changed === file) onName(this.name);
        }),
      () => onName(this.name),
    );
    return () => restarting.stop();
  }
}
