import type { StoredFile } from '@trellis/store';
import type { DagIndex } from '../definitions/dag-index.js';
import type { StoredKindCache } from '../stored-files/stored-kind-cache.js';
import { documentTitle } from '../documents/document-store.js';
import { TextCorpus } from './text-corpus.js';

/**
 * The texts search reads: DAG specs by file name, documents by id. Kept current by the same
 * change feeds as the definitions and documents caches, so a write on any coordinator is
 * searchable here as soon as this coordinator's cache has it, and a search reads no database.
 */
export class SearchIndex {
  readonly dags = new TextCorpus();
  readonly docs = new TextCorpus();

  constructor(
    private readonly definitions: DagIndex,
    private readonly documents: StoredKindCache,
  ) {}

  /** Indexes what the caches hold and follows their changes; call after the DAG index has started. */
  start(): void {
    for (const entry of this.definitions.all()) this.dags.set(entry.fileName, entry.name, entry.text);
    this.definitions.onChange((fileName, entry) => {
      if (entry === undefined) this.dags.delete(fileName);
      else this.dags.set(fileName, entry.name, entry.text);
    });
    for (const file of this.documents.all()) this.applyDocument(file);
    this.documents.onChange((file) => this.applyDocument(file));
  }

  /** Stored documents have valid ids: the docs directory's import skips files named otherwise. */
  private applyDocument(file: StoredFile): void {
    if (file.content === null) this.docs.delete(file.name);
    else this.docs.set(file.name, documentTitle(file.name, file.content), file.content);
  }
}
