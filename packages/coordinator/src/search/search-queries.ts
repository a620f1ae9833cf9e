import { NotFoundError } from '@trellis/core';
import type { DagIndex } from '../definitions/dag-index.js';
import { listItemDag } from '../definitions/dag-payloads.js';
import { encodeCursor, keyCursor, lineCursor } from './search-cursor.js';
import type { SearchIndex } from './search-index.js';
import type { CorpusHit, MatchPage, TextCorpus } from './text-corpus.js';

/**
 * Matching lines shown with each result, by every search endpoint (the un-paged ones too: a
 * word on every line of 1,000 documents would otherwise answer megabytes); the `matches`
 * endpoints page through the rest.
 */
export const PREVIEW_MATCHES = 3;
/** Matching lines per page of one item's matches. */
export const MATCHES_PER_PAGE = 20;

export interface ResultPageRequest {
  q: string;
  cursor?: string | undefined;
  limit: number;
}

export interface MatchPageRequest {
  q: string;
  cursor?: string | undefined;
}

const DAG_LIST = 'dags';
const DOC_LIST = 'docs';
const dagScope = (fileName: string) => `dag:${fileName}`;
const docScope = (id: string) => `doc:${id}`;

/**
 * The search endpoints over the in-memory search index: result lists with previews and cursors,
 * one item's further matches, and the un-paged forms of `/docs/search` and `/dags/search`,
 * all with one matcher (case-insensitive, line by line).
 */
export class SearchQueries {
  constructor(
    private readonly index: SearchIndex,
    private readonly definitions: DagIndex,
  ) {}

  searchDags(request: ResultPageRequest) {
    const { hits, hasMore, nextCursor } = this.page(this.index.dags, DAG_LIST, request);
    return { results: hits.map((hit) => ({ fileName: hit.key, name: hit.label, ...this.preview(hit, dagScope(hit.key), request.q) })), hasMore, ...nextCursor };
  }

  searchDocs(request: ResultPageRequest) {
    const { hits, hasMore, nextCursor } = this.page(this.index.docs, DOC_LIST, request);
    return { results: hits.map((hit) => ({ id: hit.key, title: hit.label, ...this.preview(hit, docScope(hit.key), request.q) })), hasMore, ...nextCursor };
  }

  dagMatches(fileName: string, request: MatchPageRequest) {
    const page = this.matchesOf(this.index.dags, dagScope(fileName), fileName, request);
    if (page === undefined) throw new NotFoundError('DAG not found', { fileName });
    return page;
  }

  docMatches(id: string, request: MatchPageRequest) {
    const page = this.matchesOf(this.index.docs, docScope(id), id, request);
    if (page === undefined) throw new NotFoundError('document not found', { path: id });
    return page;
  }

  /** The contract's `/docs/search`: every matching document with its first matching lines. */
  docsSearch(q: string) {
    return { results: this.index.docs.searchAll(q.toLowerCase(), PREVIEW_MATCHES).map((hit) => ({ id: hit.key, title: hit.label, matches: hit.matches })) };
  }

  /** The legacy `/dags/search`: every matching DAG with its list item and first matching lines. */
  legacyDagSearch(q: string) {
    const results = this.index.dags.searchAll(q.toLowerCase(), PREVIEW_MATCHES).flatMap((hit) => {
      const entry = this.definitions.get(hit.key);
      return entry !== undefined ? [{ name: entry.name, fileName: entry.fileName, dag: listItemDag(entry), matches: hit.matches }] : [];
    });
    return { results, errors: [] };
  }

  private page(corpus: TextCorpus, scope: string, { q, cursor, limit }: ResultPageRequest) {
    const after = cursor !== undefined ? keyCursor(cursor, scope, q) : undefined;
    const { hits, hasMore } = corpus.search(q.toLowerCase(), after, limit, PREVIEW_MATCHES);
    const last = hits.at(-1);
    return { hits, hasMore, nextCursor: hasMore && last !== undefined ? { nextCursor: encodeCursor({ scope, q, after: last.key }) } : {} };
  }

  /** A result's first matches; `nextMatchesCursor` continues them through the item's `matches` endpoint. */
  private preview(hit: CorpusHit, scope: string, q: string) {
    const next = this.nextMatches(hit, scope, q).nextCursor;
    return { matches: hit.matches, hasMoreMatches: hit.hasMore, ...(next !== undefined ? { nextMatchesCursor: next } : {}) };
  }

  private matchesOf(corpus: TextCorpus, scope: string, key: string, { q, cursor }: MatchPageRequest) {
    const afterLine = cursor !== undefined ? lineCursor(cursor, scope, q) : 0;
    const page = corpus.matches(key, q.toLowerCase(), afterLine, MATCHES_PER_PAGE);
    if (page === undefined) return undefined;
    return { matches: page.matches, hasMore: page.hasMore, ...this.nextMatches(page, scope, q) };
  }

  /** The cursor of the matches after the last one shown, when there are more. */
  private nextMatches(page: MatchPage, scope: string, q: string): { nextCursor?: string } {
    const last = page.matches.at(-1);
    return page.hasMore && last !== undefined ? { nextCursor: encodeCursor({ scope, q, after: last.lineNumber }) } : {};
  }
}
