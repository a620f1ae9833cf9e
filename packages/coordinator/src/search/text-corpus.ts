/** One matching line: its text, its 1-based number, and where its snippet starts (the line itself). */
export interface LineMatch {
  line: string;
  lineNumber: number;
  startLine: number;
}

/** A page of an entry's matching lines: `hasMore` when lines after the last one match too. */
export interface MatchPage {
  matches: LineMatch[];
  hasMore: boolean;
}

/** An entry that matched, with the first page of its matching lines. */
export interface CorpusHit extends MatchPage {
  key: string;
  label: string;
}

export interface CorpusPage {
  hits: CorpusHit[];
  hasMore: boolean;
}

interface CorpusEntry {
  key: string;
  /** What the entry is shown as: a DAG's name, a document's title. */
  label: string;
  lines: string[];
  lowerLines: string[];
  /** The lowered lines joined: one scan rules out an entry that cannot match. */
  lower: string;
}

/** Code-unit order: the same on every coordinator and for every locale, which a cursor (the last key) relies on. */
const byKey = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Texts by key, searched case-insensitively line by line. Each text is split and lowered once
 * when it changes, not per search; the sorted keys are rebuilt on the first search after a
 * change, so a page resumes after the last key it returned however entries come and go.
 */
export class TextCorpus {
  private readonly entries = new Map<string, CorpusEntry>();
  private sorted: string[] | undefined;

  set(key: string, label: string, text: string): void {
    const lines = text.split(/\r?\n/);
    const lowerLines = lines.map((line) => line.toLowerCase());
    if (!this.entries.has(key)) this.sorted = undefined;
    this.entries.set(key, { key, label, lines, lowerLines, lower: lowerLines.join('\n') });
  }

  delete(key: string): void {
    if (this.entries.delete(key)) this.sorted = undefined;
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * Up to `limit` matching entries in key order after the key `after`, each with its first
   * `previewSize` matching lines. `needle` is already lowered.
   */
  search(needle: string, after: string | undefined, limit: number, previewSize: number): CorpusPage {
    const keys = this.keys();
    const hits: CorpusHit[] = [];
    for (let i = after === undefined ? 0 : firstAfter(keys, after); i < keys.length; i++) {
      const entry = this.entries.get(keys[i] ?? '');
      if (entry === undefined || !entry.lower.includes(needle)) continue;
      const page = linesOf(entry, needle, 0, previewSize);
      if (page.matches.length === 0) continue;
      if (hits.length === limit) return { hits, hasMore: true };
      hits.push({ key: entry.key, label: entry.label, ...page });
    }
    return { hits, hasMore: false };
  }

  /** Every matching entry in key order, each with its first `previewSize` matching lines. */
  searchAll(needle: string, previewSize: number): CorpusHit[] {
    return this.search(needle, undefined, Number.POSITIVE_INFINITY, previewSize).hits;
  }

  /** One entry's matching lines after line `afterLine`; undefined when there is no such entry. */
  matches(key: string, needle: string, afterLine: number, limit: number): MatchPage | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    return entry.lower.includes(needle) ? linesOf(entry, needle, afterLine, limit) : { matches: [], hasMore: false };
  }

  private keys(): string[] {
    this.sorted ??= [...this.entries.keys()].sort(byKey);
    return this.sorted;
  }
}

/** The index of the first key greater than `after` (binary search over the sorted keys). */
function firstAfter(keys: string[], after: string): number {
  let low = 0;
  let high = keys.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((keys[mid] ?? '') <= after) low = mid + 1;
    else high = mid;
  }
  return low;
}

function linesOf(entry: CorpusEntry, needle: string, afterLine: number, limit: number): MatchPage {
  const matches: LineMatch[] = [];
  for (let i = afterLine; i < entry.lowerLines.length; i++) {
    if (!(entry.lowerLines[i] ?? '').includes(needle)) continue;
    if (matches.length === limit) return { matches, hasMore: true };
    matches.push({ line: entry.lines[i] ?? '', lineNumber: i + 1, startLine: i + 1 });
  }
  return { matches, hasMore: false };
}
