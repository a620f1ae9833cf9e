import {
  createStoredFile, deleteStoredFile, listenStoredFiles, putStoredFile, renameStoredFile, storedFilesSince, storedFilesVersion, storedVersions, updateStoredFile,
  type Db, type RenameOutcome, type StoredFile, type StoredFileKind,
} from '@trellis/store';
import { toError } from '@trellis/core';
import type { Logger } from '../logging/logger.js';

/** A file of the kind was written, or deleted (its tombstone: content null). */
export type StoredFileListener = (file: StoredFile) => void;

/**
 * The live files of one kind, mirrored from the database. Catches up by version (every row
 * written after the newest version it has seen, tombstones included), so a notification only
 * says "look"; a read that must be exact asks for the kind's counter first (`current`).
 */
export class StoredKindCache {
  private readonly live = new Map<string, StoredFile>();
  private readonly listeners: StoredFileListener[] = [];
  private version = 0;
  /** The catch-up that has not started yet: callers arriving now share it. */
  private queued: Promise<void> | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly db: Db,
    readonly kind: StoredFileKind,
    /** This coordinator instance: the `origin` of its writes. */
    readonly origin: string,
  ) {}

  get(name: string): StoredFile | undefined {
    return this.live.get(name);
  }

  /** The newest version this cache has applied: what its files are as of. */
  get seenVersion(): number {
    return this.version;
  }

  all(): StoredFile[] {
    return [...this.live.values()];
  }

  onChange(listener: StoredFileListener): void {
    this.listeners.push(listener);
  }

  /**
   * Applies every write committed before this call. Catch-ups run one at a time; one that has
   * not started yet is shared, since it will see everything committed before it starts.
   */
  catchUp(): Promise<void> {
    if (this.queued !== undefined) return this.queued;
    const next: Promise<void> = (this.running ?? Promise.resolve())
      .catch(() => undefined)
      .then(() => {
        this.queued = undefined;
        this.running = next;
        return this.pull();
      })
      .finally(() => {
        if (this.running === next) this.running = undefined;
      });
    this.queued = next;
    return next;
  }

  /** Catches up only when the database has a newer version: one indexed read when nothing changed. */
  async current(): Promise<void> {
    await this.currentAt(await storedFilesVersion(this.db, this.kind));
  }

  /**
   * `current` for caches of several kinds on one database, with one read of their counters;
   * answers the profile counter that read saw (see ProfileService.resolve).
   */
  static async currentAll(first: StoredKindCache, ...others: StoredKindCache[]): Promise<number> {
    const caches = [first, ...others];
    const versions = await storedVersions(first.db, caches.map((cache) => cache.kind));
    await Promise.all(caches.map((cache) => cache.currentAt(versions.files.get(cache.kind) ?? 0)));
    return versions.profiles;
  }

  /** Catches up when `version`, the kind's counter as just read, is newer than what this cache has seen. */
  private async currentAt(version: number): Promise<void> {
    if (version > this.version) await this.catchUp();
  }

  /** A new file; undefined when a live one holds the name (the contract's conflict). */
  async create(name: string, content: string, by: string): Promise<StoredFile | undefined> {
    return this.applied(await createStoredFile(this.db, this.kind, name, content, { by, origin: this.origin }));
  }

  async update(name: string, content: string, by: string): Promise<StoredFile | undefined> {
    return this.applied(await updateStoredFile(this.db, this.kind, name, content, { by, origin: this.origin }));
  }

  /** Creates or replaces (imports from a directory); undefined when the content was already this. */
  async put(name: string, content: string, by: string): Promise<StoredFile | undefined> {
    return this.applied(await putStoredFile(this.db, this.kind, name, content, { by, origin: this.origin }));
  }

  async delete(name: string, by: string): Promise<StoredFile | undefined> {
    return this.applied(await deleteStoredFile(this.db, this.kind, name, { by, origin: this.origin }));
  }

  async rename(from: string, to: string, by: string): Promise<RenameOutcome> {
    const outcome = await renameStoredFile(this.db, this.kind, from, to, { by, origin: this.origin });
    if (outcome.renamed) await this.catchUp();
    return outcome;
  }

  /** A write is visible here before the caller answers (read your writes). */
  private async applied(row: StoredFile | undefined): Promise<StoredFile | undefined> {
    if (row !== undefined) await this.catchUp();
    return row;
  }

  private async pull(): Promise<void> {
    const rows = await storedFilesSince(this.db, this.kind, this.version);
    for (const row of rows) {
      this.version = Math.max(this.version, row.version);
      const before = this.live.get(row.name);
      if (row.content === null) {
        if (this.live.delete(row.name)) this.emit(row);
      } else {
        this.live.set(row.name, row);
        if (before?.contentHash !== row.contentHash) this.emit(row);
      }
    }
  }

  private emit(file: StoredFile): void {
    for (const listener of this.listeners) listener(file);
  }
}

/**
 * The three kinds of stored files with one change feed: a notification (from any coordinator)
 * makes the kind it names catch up; after a lost connection, every kind does.
 */
export class StoredFileCaches {
  readonly dag: StoredKindCache;
  readonly base: StoredKindCache;
  readonly doc: StoredKindCache;
  private unlisten: (() => Promise<void>) | undefined;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
    origin: string,
  ) {
    this.dag = new StoredKindCache(db, 'dag', origin);
    this.base = new StoredKindCache(db, 'base', origin);
    this.doc = new StoredKindCache(db, 'doc', origin);
  }

  /** Listens first, then loads: a write committed in between is caught up either way. */
  async start(): Promise<void> {
    this.unlisten = await listenStoredFiles(
      this.db,
      (kind) => {
        for (const cache of this.kinds()) {
          if (kind === undefined || kind === cache.kind) cache.catchUp().catch((error: unknown) => this.logger.warn('catching up stored files failed', { kind: cache.kind, error: toError(error) }));
        }
      },
      (error) => this.logger.warn('stored file notifications interrupted; reconnecting', { error }),
    );
    await Promise.all(this.kinds().map((cache) => cache.catchUp()));
  }

  async stop(): Promise<void> {
    await this.unlisten?.();
    this.unlisten = undefined;
  }

  private kinds(): StoredKindCache[] {
    return [this.dag, this.base, this.doc];
  }
}
