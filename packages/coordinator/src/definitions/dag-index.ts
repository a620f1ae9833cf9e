import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dagFileNameOf, loadDag, parseBaseConfig, toError, type BaseConfig, type DagLoadResult } from '@trellis/core';
import type { DagFiles } from './dag-files.js';
import type { Logger } from '../logging/logger.js';

export interface IndexedDag {
  fileName: string;
  text: string;
  mtimeMs: number;
  result: DagLoadResult;
  /** The DAG's name: its `name:` field, else the file name. */
  name: string;
}

export type DagChangeListener = (fileName: string, entry: IndexedDag | undefined) => void;

/** How long to wait for a burst of file events (editors write in several steps) before reloading. */
const WATCH_DEBOUNCE_MS = 100;

/**
 * Every definition in the DAGs directory, parsed and kept in memory, so listing 1,000 DAGs
 * never touches the disk. API writes refresh their file at once; a directory watch picks up
 * edits made by hand or by repository sync.
 */
export class DagIndex {
  private readonly entries = new Map<string, IndexedDag>();
  private readonly listeners: DagChangeListener[] = [];
  private readonly pending = new Map<string, NodeJS.Timeout>();
  private watcher: FSWatcher | undefined;
  private base: BaseConfig | undefined;
  private baseErrors: string[] = [];

  constructor(
    private readonly files: DagFiles,
    private readonly logger: Logger,
    private readonly baseConfigPath?: string,
  ) {}

  async start(options: { watch: boolean }): Promise<void> {
    await this.files.ensureDir();
    await this.loadBase();
    for (const fileName of await this.files.list()) await this.refresh(fileName);
    this.logger.info('indexed DAG definitions', { dir: this.files.dir, count: this.entries.size });
    if (options.watch) this.startWatching();
  }

  stop(): void {
    this.watcher?.close();
    this.watcher = undefined;
    for (const timer of this.pending.values()) clearTimeout(timer);
    this.pending.clear();
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

  get size(): number {
    return this.entries.size;
  }

  /** Parses a spec the way stored definitions are parsed (same base configuration). */
  parse(text: string, fileName: string): DagLoadResult {
    const result = loadDag(text, { fileName, ...(this.base !== undefined ? { base: this.base } : {}) });
    if (this.baseErrors.length === 0) return result;
    return { ...result, errors: [...this.baseErrors.map((e) => `base config: ${e}`), ...result.errors] };
  }

  /** Re-reads one definition from disk (or drops it when the file is gone). */
  async refresh(fileName: string): Promise<IndexedDag | undefined> {
    const file = await this.files.read(fileName);
    if (file === undefined) {
      if (this.entries.delete(fileName)) this.emit(fileName, undefined);
      return undefined;
    }
    const previous = this.entries.get(fileName);
    if (previous !== undefined && previous.text === file.text) return previous;
    const result = this.parse(file.text, fileName);
    const entry: IndexedDag = { fileName, text: file.text, mtimeMs: file.mtimeMs, result, name: result.dag?.name ?? fileName };
    this.entries.set(fileName, entry);
    this.emit(fileName, entry);
    return entry;
  }

  private async loadBase(): Promise<void> {
    if (this.baseConfigPath === undefined) return;
    let text: string;
    try {
      text = await readFile(this.baseConfigPath, 'utf8');
    } catch (error) {
      this.baseErrors = [`cannot read ${this.baseConfigPath}: ${toError(error).message}`];
      return;
    }
    const parsed = parseBaseConfig(text);
    this.base = parsed.base;
    this.baseErrors = parsed.errors;
    if (parsed.errors.length > 0) this.logger.warn('base configuration has errors', { path: this.baseConfigPath, errors: parsed.errors });
  }

  private emit(fileName: string, entry: IndexedDag | undefined): void {
    for (const listener of this.listeners) listener(fileName, entry);
  }

  private startWatching(): void {
    try {
      this.watcher = watch(this.files.dir, (_event, name) => {
        const fileName = name !== null ? dagFileNameOf(name) : undefined;
        if (fileName !== undefined) this.schedule(fileName);
      });
      this.watcher.on('error', (error) => this.logger.warn('DAG directory watch failed', { error: toError(error) }));
    } catch (error) {
      this.logger.warn('cannot watch the DAG directory; API changes still apply', { dir: this.files.dir, error: toError(error) });
    }
  }

  private schedule(fileName: string): void {
    clearTimeout(this.pending.get(fileName));
    this.pending.set(
      fileName,
      setTimeout(() => {
        this.pending.delete(fileName);
        this.refresh(fileName).catch((error: unknown) => this.logger.warn('reloading a DAG file failed', { fileName, error: toError(error) }));
      }, WATCH_DEBOUNCE_MS),
    );
  }
}
