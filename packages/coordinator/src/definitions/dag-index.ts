import { loadDag, parseBaseConfig, type BaseConfig, type Dag, type DagLoadResult } from '@trellis/core';
import type { DefinitionVersions, StoredFile } from '@trellis/store';
import { StoredKindCache } from '../stored-files/stored-kind-cache.js';
import type { Logger } from '../logging/logger.js';

export interface IndexedDag {
  fileName: string;
  text: string;
  /** When the definition last changed (in the database). */
  mtimeMs: number;
  result: DagLoadResult;
  /** The DAG's name: its `name:` field, else the file name. */
  name: string;
}

/**
 * Orders like String#localeCompare without arguments, but builds the collator once, not per
 * comparison; on the first listing, not at import: its collation data is 3 MB of resident memory
 * a coordinator that is never asked for a list need not hold.
 */
let collator: Intl.Collator | undefined;
const compare = (a: string, b: string): number => (collator ??= new Intl.Collator()).compare(a, b);

/** Entries ordered by a key computed once per entry, ties by file name. */
export function orderedBy(entries: IndexedDag[], keyOf: (entry: IndexedDag) => string): IndexedDag[] {
  return entries
    .map((entry) => ({ entry, key: keyOf(entry) }))
    .sort((a, b) => compare(a.key, b.key) || compare(a.entry.fileName, b.entry.fileName))
    .map((ranked) => ranked.entry);
}

/** A definition changed (`entry` undefined: deleted); `origin` is the coordinator instance that wrote the change. */
export type DagChangeListener = (fileName: string, entry: IndexedDag | undefined, origin: string) => void;

/** The name of the base configuration's one stored file. */
export const BASE_CONFIG_NAME = 'base';

/**
 * Every DAG definition, parsed and kept in memory, so listing 1,000 DAGs reads neither the
 * database nor the disk. It follows the stored definitions and base configuration (see
 * StoredKindCache): a change made through any coordinator, or imported from a directory,
 * arrives here within a notification; `current` makes a read exact.
 */
export class DagIndex {
  private readonly entries = new Map<string, IndexedDag>();
  /** The entries in name order, kept until the next change: a list request does not sort 1,000 DAGs. */
  private nameOrder: readonly IndexedDag[] | undefined;
  private readonly listeners: DagChangeListener[] = [];
  private base: BaseConfig | undefined;
  private baseErrors: string[] = [];
  /** The profile counter the newest exact read saw; undefined before the first. */
  private profilesSeen: number | undefined;

  constructor(
    private readonly dags: StoredKindCache,
    private readonly baseConfig: StoredKindCache,
    private readonly logger: Logger,
  ) {}

  /** Indexes what the caches hold and follows their changes; the caches are started by their owner. */
  start(): void {
    this.loadBase(this.baseConfig.get(BASE_CONFIG_NAME));
    for (const file of this.dags.all()) this.apply(file.name, file);
    this.dags.onChange((file) => this.apply(file.name, file, file.origin));
    this.baseConfig.onChange((base) => {
      if (base.name !== BASE_CONFIG_NAME) return;
      this.loadBase(base);
      for (const entry of this.all()) this.apply(entry.fileName, this.dags.get(entry.fileName), base.origin);
    });
    this.logger.info('indexed DAG definitions', { count: this.entries.size });
  }

  onChange(listener: DagChangeListener): void {
    this.listeners.push(listener);
  }

  get(fileName: string): IndexedDag | undefined {
    return this.entries.get(fileName);
  }

  all(): IndexedDag[] {
    return [...this.entries.values()];
  }

  /** Every entry by name, any case, then file name. */
  inNameOrder(): readonly IndexedDag[] {
    this.nameOrder ??= orderedBy(this.all(), (e) => e.name.toLowerCase());
    return this.nameOrder;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Parses a spec the way stored definitions are parsed (same base configuration). */
  parse(text: string, fileName: string): DagLoadResult {
    const result = loadDag(text, { fileName, ...(this.base !== undefined ? { base: this.base } : {}) });
    if (this.baseErrors.length === 0) return result;
    return { ...result, errors: [...this.baseErrors.map((e) => `base config: ${e}`), ...result.errors] };
  }

  /**
   * Brings the index up to the database's newest definitions: for reads and writes that must be
   * exact. Answers the profile counter read with them, so a run queued from them resolves its
   * profile entries as of the same moment (see ProfileService.resolve).
   */
  async current(): Promise<number> {
    const profiles = await StoredKindCache.currentAll(this.baseConfig, this.dags);
    // Reads answer out of order; the counter only grows.
    this.profilesSeen = Math.max(this.profilesSeen ?? 0, profiles);
    return profiles;
  }

  /**
   * A valid definition as this index holds it, with the versions it holds it as of (and the
   * profile counter its last exact read saw), for a start whose insert checks them instead of
   * reading them first (RunCommands.startStored); undefined before the first exact read.
   */
  startable(fileName: string): { dag: Dag; yaml: string; expect: DefinitionVersions } | undefined {
    const entry = this.entries.get(fileName);
    if (this.profilesSeen === undefined || entry?.result.dag === undefined) return undefined;
    const files = [this.baseConfig, this.dags].map((cache) => ({ kind: cache.kind, version: cache.seenVersion }));
    return { dag: entry.result.dag, yaml: entry.text, expect: { files, profiles: this.profilesSeen } };
  }

  /** The definition as the database has it now, and the profile counter read with it. */
  async refresh(fileName: string): Promise<{ entry: IndexedDag | undefined; profilesVersion: number }> {
    const profilesVersion = await this.current();
    return { entry: this.get(fileName), profilesVersion };
  }

  /** Indexes a definition; a change is announced with its origin (the initial load has none). */
  private apply(fileName: string, file: StoredFile | undefined, origin?: string): void {
    this.nameOrder = undefined;
    if (file?.content == null) {
      if (this.entries.delete(fileName) && origin !== undefined) this.emit(fileName, undefined, origin);
      return;
    }
    const result = this.parse(file.content, fileName);
    const entry: IndexedDag = { fileName, text: file.content, mtimeMs: file.updatedAt.getTime(), result, name: result.dag?.name ?? fileName };
    this.entries.set(fileName, entry);
    if (origin !== undefined) this.emit(fileName, entry, origin);
  }

  private loadBase(file: StoredFile | undefined): void {
    if (file?.content == null) {
      this.base = undefined;
      this.baseErrors = [];
      return;
    }
    const parsed = parseBaseConfig(file.content);
    this.base = parsed.base;
    this.baseErrors = parsed.errors;
    if (parsed.errors.length > 0) this.logger.warn('base configuration has errors', { errors: parsed.errors });
  }

  private emit(fileName: string, entry: IndexedDag | undefined, origin: string): void {
    for (const listener of this.listeners) listener(fileName, entry, origin);
  }
}
