import { parse as parseYaml } from 'yaml';
import { AlreadyExistsError, BadRequestError, NotFoundError } from '@trellis/core';
import type { StoredFile } from '@trellis/store';
import type { StoredKindCache } from '../stored-files/stored-kind-cache.js';
import { isValidDocumentId, MAX_DOCUMENT_ID_LENGTH } from './document-id.js';
import type { Actor } from '../auth/principal.js';

/**
 * What every document write answers to beside the id rule: whether writes are allowed now
 * (refused in sync's read-only mode), and the audit trail that records each one.
 */
export interface DocumentWriteRules {
  requireWritable(): Promise<void>;
  record(actor: Actor, type: string, message: string, data: Record<string, unknown>): Promise<void>;
}

export interface DocumentSummary {
  id: string;
  title: string;
}

export interface StoredDocument extends DocumentSummary {
  /** The full text, frontmatter included. */
  content: string;
  createdAt: string;
  updatedAt: string;
}

/** A document was written (its summary) or deleted (undefined). */
export type DocumentListener = (id: string, document: DocumentSummary | undefined) => void;

const FRONTMATTER = /^---\r?\n([\s\S]*?)\r?\n---(?:\r?\n|$)/;

/** The frontmatter's `title`, else the id's last segment (only `title` is read from frontmatter). */
export function documentTitle(id: string, content: string): string {
  const block = FRONTMATTER.exec(content)?.[1];
  if (block !== undefined) {
    try {
      const meta = parseYaml(block) as unknown;
      if (typeof meta === 'object' && meta !== null && typeof (meta as { title?: unknown }).title === 'string') return (meta as { title: string }).title;
    } catch {
      // frontmatter that is not YAML has no title
    }
  }
  return id.slice(id.lastIndexOf('/') + 1);
}

/** Where this coordinator keeps its copy of the documents: an id whose path leads out of it (a symbolic link) is refused. */
export interface DocumentPaths {
  confined(id: string): Promise<boolean>;
}

function toDocument(file: StoredFile & { content: string }): StoredDocument {
  return { id: file.name, title: documentTitle(file.name, file.content), content: file.content, createdAt: file.createdAt.toISOString(), updatedAt: file.updatedAt.toISOString() };
}

/**
 * The documents of the contract's Documents section, stored in the database (shared by every
 * coordinator) and mirrored to the docs directory, with files written there by runs imported.
 * Reads of one document and every write are exact; the list reads the cache. Of the contract's
 * write rules, the role is the route's `dags:write`; "sync not in read-only mode" and the audit
 * record of every write are the write rules given (none in tests of the store alone).
 */
export class DocumentStore {
  constructor(
    private readonly docs: StoredKindCache,
    /** This coordinator's docs directory; none when it keeps no copy (an empty `docsDir`). */
    private readonly paths?: DocumentPaths,
    private readonly rules?: DocumentWriteRules,
  ) {}

  async create(by: Actor, id: string, content: string): Promise<StoredDocument> {
    await this.requireId(id, 'id');
    await this.rules?.requireWritable();
    const file = await this.docs.create(id, content, by.name);
    if (file?.content == null) throw new AlreadyExistsError('document already exists', { id });
    await this.rules?.record(by, 'doc.created', `created document ${id}`, { id });
    return toDocument({ ...file, content: file.content });
  }

  async get(id: string): Promise<StoredDocument> {
    await this.requireId(id, 'path');
    await this.docs.current();
    const file = this.docs.get(id);
    if (file?.content == null) throw new NotFoundError('document not found', { path: id });
    return toDocument({ ...file, content: file.content });
  }

  async update(by: Actor, id: string, content: string): Promise<StoredDocument> {
    await this.requireId(id, 'path');
    await this.rules?.requireWritable();
    const file = await this.docs.update(id, content, by.name);
    if (file?.content == null) throw new NotFoundError('document not found', { path: id });
    await this.rules?.record(by, 'doc.updated', `updated document ${id}`, { id });
    return toDocument({ ...file, content: file.content });
  }

  async delete(by: Actor, id: string): Promise<void> {
    await this.requireId(id, 'path');
    await this.rules?.requireWritable();
    if ((await this.docs.delete(id, by.name)) === undefined) throw new NotFoundError('document not found', { path: id });
    await this.rules?.record(by, 'doc.deleted', `deleted document ${id}`, { id });
  }

  async rename(by: Actor, id: string, newId: string): Promise<StoredDocument> {
    await this.requireId(id, 'path');
    await this.requireId(newId, 'newPath');
    await this.rules?.requireWritable();
    const outcome = await this.docs.rename(id, newId, by.name);
    if (!outcome.renamed && outcome.reason === 'missing') throw new NotFoundError('document not found', { path: id });
    if (!outcome.renamed) throw new AlreadyExistsError('a document with that path already exists', { newPath: newId });
    await this.rules?.record(by, 'doc.renamed', `renamed document ${id} to ${newId}`, { id, newPath: newId });
    return toDocument({ ...outcome.target, content: outcome.target.content ?? '' });
  }

  /** Every document's id and title, sorted by id. */
  list(): DocumentSummary[] {
    return this.docs
      .all()
      .flatMap((file) => (file.content !== null ? [{ id: file.name, title: documentTitle(file.name, file.content) }] : []))
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /**
   * The contract's id rule, and the path resolved on this coordinator's disk must stay in the
   * docs directory, so no request touches anything outside it.
   */
  private async requireId(id: string, field: string): Promise<void> {
    if (!isValidDocumentId(id)) {
      throw new BadRequestError(`${field} must be at most ${MAX_DOCUMENT_ID_LENGTH} characters of path segments that start with a letter or digit ([a-zA-Z0-9_. -])`, { [field]: id });
    }
    if (this.paths !== undefined && !(await this.paths.confined(id))) throw new BadRequestError(`${field} does not name a file inside the docs directory (a symbolic link leads out of it, or a segment is too long for a file name)`, { [field]: id });
  }

  onChange(listener: DocumentListener): void {
    this.docs.onChange(({ name, content }) => listener(name, content !== null ? { id: name, title: documentTitle(name, content) } : undefined));
  }
}
