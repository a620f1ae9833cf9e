import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { contentHash, deleteStoredFile, putStoredFiles, storedFilesSince, type Db, type StoredFile } from '@trellis/store';
import { toError } from '@trellis/core';
import type { Logger } from '../logging/logger.js';
import type { StoredKindCache } from './stored-kind-cache.js';
import { writeAtomically } from './atomic-write.js';

/** The files of one kind in a directory (or one file): what a mirror reads, writes and watches. */
export interface MirrorFiles {
  /** The directory (or file), for messages and to notice that it is gone. */
  readonly root: string;
  /** Where the mirror keeps the content hash of each name as last agreed with the database. */
  readonly manifestPath: string;
  list(): Promise<string[]>;
  read(name: string): Promise<{ text: string; mtimeMs: number } | undefined>;
  /** Writes `text` unless the file changed since the mirror looked (`unchanged`, see writeUnlessChanged); resolves to whether it wrote. */
  write(name: string, text: string, unchanged: (current: string | undefined) => boolean): Promise<boolean>;
  remove(name: string): Promise<void>;
  /** Calls `onName` with the name of each file that may have changed; returns the stop, or undefined when it cannot watch. */
  watch(onName: (name: string) => void): (() => void) | undefined;
}

/** How long to wait for a burst of file events (editors write in several steps) before importing. */
const WATCH_DEBOUNCE_MS = 100;
/** How long manifest updates gather before they are written. */
const MANIFEST_DELAY_MS = 200;

type Side = 'disk' | 'database';

/**
 * Keeps a directory and the database's files of one kind in agreement; the database is the
 * source of truth, the directory the way to edit by hand (README: "The DAGs directory and the
 * database"). At start, each name whose file and row differ is settled by the manifest (the
 * hash both last agreed on): the side that still holds it is stale, the other wins; when both
 * moved (or nothing was agreed) the newer wins and a warning names the file. Afterwards every
 * database change is written to the file, and a file changed by hand is imported.
 */
export class DirectoryMirror {
  private agreed = new Map<string, string>();
  private queue: Promise<void> = Promise.resolve();
  private readonly pending = new Map<string, NodeJS.Timeout>();
  private manifestTimer: NodeJS.Timeout | undefined;
  private stopWatch: (() => void) | undefined;
  private stopped = false;

  constructor(
    private readonly db: Db,
    private readonly cache: StoredKindCache,
    private readonly files: MirrorFiles,
    private readonly logger: Logger,
    /** Recorded as the writer of what is imported. */
    private readonly importer: string,
  ) {}

  async start(options: { watch: boolean }): Promise<void> {
    await mkdir(this.files.root, { recursive: true });
    this.agreed = await this.readManifest();
    await this.reconcile();
    this.cache.onChange((file) => this.enqueue(() => this.writeOut(file)));
    if (options.watch) this.startWatching();
  }

  /** Stops watching and waits for the writes under way; the manifest is saved. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopWatch?.();
    for (const timer of this.pending.values()) clearTimeout(timer);
    this.pending.clear();
    await this.queue;
    if (this.manifestTimer !== undefined) {
      clearTimeout(this.manifestTimer);
      this.manifestTimer = undefined;
      await this.saveManifest();
    }
  }

  private startWatching(): void {
    try {
      this.stopWatch = this.files.watch((name) => this.schedule(name));
    } catch (error) {
      this.logger.warn('cannot watch a mirrored directory; database changes still reach it', { root: this.files.root, error: toError(error) });
    }
  }

  /** Every write or import of this mirror, one at a time. */
  private enqueue(step: () => Promise<void>): void {
    this.queue = this.queue.then(step).catch((error: unknown) => {
      this.logger.warn('mirroring a stored file failed', { root: this.files.root, error: toError(error) });
    });
  }

  private async reconcile(): Promise<void> {
    const rows = new Map((await storedFilesSince(this.db, this.cache.kind, 0)).map((row) => [row.name, row]));
    const names = new Set([...rows.keys(), ...(await this.files.list())]);
    const imports: Array<{ name: string; content: string }> = [];
    for (const name of names) {
      const imported = await this.settle(name, rows.get(name));
      if (imported !== undefined) imports.push({ name, content: imported });
    }
    // One transaction for every imported file: a first start on a directory of 1,000 DAGs.
    await putStoredFiles(this.db, this.cache.kind, imports, { by: this.importer, origin: this.cache.origin });
    await this.cache.catchUp();
    await this.saveManifest();
    this.logger.info('stored files agree with their directory', { kind: this.cache.kind, root: this.files.root, files: this.cache.all().length, imported: imports.length });
  }

  /** Settles one name at start; returns the file's text when it is to be imported (the caller stores the imports together). */
  private async settle(name: string, row: StoredFile | undefined): Promise<string | undefined> {
    const file = await this.files.read(name);
    const fileHash = file !== undefined ? contentHash(file.text) : null;
    const rowHash = row?.contentHash ?? null;
    if (fileHash === rowHash) {
      this.agree(name, rowHash);
      return undefined;
    }
    if (this.winner(name, file, row, fileHash, rowHash) === 'disk') {
      this.agree(name, fileHash);
      if (file !== undefined) return file.text;
      await deleteStoredFile(this.db, this.cache.kind, name, { by: this.importer, origin: this.cache.origin });
      return undefined;
    }
    if (row?.content == null) await this.files.remove(name);
    else if (!(await this.files.write(name, row.content, this.stillHashed(fileHash)))) return undefined;
    this.agree(name, rowHash);
    return undefined;
  }

  private winner(name: string, file: { mtimeMs: number } | undefined, row: StoredFile | undefined, fileHash: string | null, rowHash: string | null): Side {
    // A name the database never had (not even deleted) is imported, whatever the manifest says:
    // the directory may have agreed with another database, and only a recorded delete deletes a file.
    if (row === undefined) return 'disk';
    const agreed = this.agreed.get(name);
    if (agreed !== undefined && fileHash === agreed) return 'database';
    if (agreed !== undefined && rowHash === agreed) return 'disk';
    // Nothing agreed on: a file the directory lost comes back.
    if (agreed === undefined && file === undefined) return 'database';
    const winner: Side = file !== undefined && file.mtimeMs > row.updatedAt.getTime() ? 'disk' : 'database';
    this.logger.warn('a stored file changed both on disk and in the database; the newer one wins', { kind: this.cache.kind, name, root: this.files.root, winner });
    return winner;
  }

  /**
   * A database change reaches the file, unless the file already holds it (our own import, or a
   * shared directory), or was changed by hand since the last agreement: that change is newer, and
   * its import (or the next start) settles it. A missing file counts as changed by hand only when
   * the change is the content already agreed (our own import, announced after the file was
   * deleted); writing it back would undo that delete.
   */
  private async writeOut({ name, content, contentHash: wanted }: StoredFile): Promise<void> {
    if (this.stopped) return;
    const onDisk = await this.files.read(name);
    const diskHash = onDisk !== undefined ? contentHash(onDisk.text) : null;
    const agreed = this.agreed.get(name) ?? null;
    if (diskHash !== wanted && (diskHash !== null ? diskHash !== agreed : wanted === agreed)) return;
    if (diskHash !== wanted) {
      // Changed by hand while the write went on: the change's own file event imports it.
      if (content === null) await this.files.remove(name);
      else if (!(await this.files.write(name, content, this.stillHashed(diskHash)))) return;
    }
    this.agree(name, wanted);
  }

  /** Whether a file's text (undefined: none) still has the hash the mirror read. */
  private stillHashed(hash: string | null): (current: string | undefined) => boolean {
    return (current) => (current !== undefined ? contentHash(current) : null) === hash;
  }

  private schedule(name: string): void {
    clearTimeout(this.pending.get(name));
    this.pending.set(
      name,
      setTimeout(() => {
        this.pending.delete(name);
        this.enqueue(() => this.importChange(name));
      }, WATCH_DEBOUNCE_MS),
    );
  }

  /**
   * A file event: a file that differs from the database and from what was last agreed was
   * edited by hand and is imported (even when it does not parse: its errors show). A file that
   * is gone is a delete only when it held the agreed content and its directory still exists;
   * a directory that vanished is a lost cache, written back at the next start.
   */
  private async importChange(name: string): Promise<void> {
    if (this.stopped) return;
    await this.cache.current();
    const file = await this.files.read(name);
    const row = this.cache.get(name);
    const fileHash = file !== undefined ? contentHash(file.text) : null;
    const rowHash = row?.contentHash ?? null;
    if (fileHash === rowHash) return this.agree(name, rowHash);
    if (fileHash === this.agreed.get(name)) return;
    if (file !== undefined) {
      await this.cache.put(name, file.text, this.importer);
      this.logger.info('imported a file changed on disk', { kind: this.cache.kind, name, root: this.files.root });
    } else {
      if (!existsSync(this.files.root) || this.agreed.get(name) !== rowHash) return;
      await this.cache.delete(name, this.importer);
      this.logger.info('a file deleted on disk deleted its stored file', { kind: this.cache.kind, name, root: this.files.root });
    }
    this.agree(name, fileHash);
  }

  private agree(name: string, hash: string | null): void {
    if ((this.agreed.get(name) ?? null) === hash) return;
    if (hash === null) this.agreed.delete(name);
    else this.agreed.set(name, hash);
    if (this.manifestTimer !== undefined || this.stopped) return;
    this.manifestTimer = setTimeout(() => {
      this.manifestTimer = undefined;
      this.enqueue(() => this.saveManifest());
    }, MANIFEST_DELAY_MS);
  }

  private async readManifest(): Promise<Map<string, string>> {
    try {
      const parsed = JSON.parse(await readFile(this.files.manifestPath, 'utf8')) as unknown;
      if (typeof parsed !== 'object' || parsed === null) return new Map();
      return new Map(Object.entries(parsed).filter((e): e is [string, string] => typeof e[1] === 'string'));
    } catch {
      // No manifest (a new or lost directory) or an unreadable one: nothing was agreed.
      return new Map();
    }
  }

  private async saveManifest(): Promise<void> {
    if (!existsSync(this.files.root)) return;
    await writeAtomically(this.files.manifestPath, JSON.stringify(Object.fromEntries([...this.agreed].sort(([a], [b]) => (a < b ? -1 : 1))), null, 1));
  }
}
