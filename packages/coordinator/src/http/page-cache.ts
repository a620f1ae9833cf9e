/** What a list page is made of, and how to write it. */
export interface ListPage {
  /**
   * Everything the page's text depends on: strings, numbers and booleans compare by value,
   * objects by identity (so an object replaced on change is a change). A held page keeps its
   * parts alive: a number standing for a large object keeps less.
   */
  parts: readonly unknown[];
  /** The page's JSON text: the costly part, written only when a part changed. */
  text(): string;
}

/** What a cache holds at most, in bytes of bodies and keys: some twenty 100-item pages. */
const DEFAULT_BUDGET_BYTES = 2 * 1024 * 1024;
/** Pages held at most, however small: an empty page is a few bytes, its key and parts are not. */
const MAX_PAGES = 256;
/** Longer keys (filters with long names or label lists) are not kept: a caller picks them. */
const MAX_KEY_LENGTH = 1024;
/** What an entry costs besides its body and key: the parts array and the map's own entry, roughly. */
const ENTRY_OVERHEAD_BYTES = 512;

/**
 * List answers (DAG and run pages) as the bytes last sent, by request, kept while every part
 * they were made of is the same. A list is mostly read again unchanged (a page in a browser
 * polls, several people watch one), and its parts come from caches that hand out the same values
 * while nothing changed (RunSummaryCache's summaries, the DAG index's entries): reading them
 * still costs the request its database round trip, but not joining a hundred items into 80 KB
 * of text, measuring it and encoding it again. On the DAG list, 8 different pages in flight,
 * that was a fifth of the coordinator's CPU per request (0.68-0.70 against 0.83-0.85 ms). The
 * least recently read pages are forgotten first, past the byte budget or the page count; the
 * parts' strings are mostly shared with the caches they came from, and not counted.
 */
export class PageCache {
  private readonly pages = new Map<string, { parts: readonly unknown[]; body: Buffer }>();
  private bytes = 0;

  constructor(private readonly budgetBytes = DEFAULT_BUDGET_BYTES) {}

  /** The body of `page` for the request `key`: the one held when its parts are all the same, else written now (and held). */
  body(key: string, page: ListPage): Buffer {
    const held = this.pages.get(key);
    if (held !== undefined && sameParts(held.parts, page.parts)) {
      // Map keeps insertion order: taking an entry out and back in makes it the most recent.
      this.pages.delete(key);
      this.pages.set(key, held);
      return held.body;
    }
    const body = Buffer.from(page.text());
    this.forget(key);
    if (key.length <= MAX_KEY_LENGTH && costOf(key, body) <= this.budgetBytes) this.keep(key, { parts: page.parts, body });
    return body;
  }

  /** Bytes held, as counted against the budget. */
  get size(): number {
    return this.bytes;
  }

  /** Pages held. */
  get pageCount(): number {
    return this.pages.size;
  }

  private keep(key: string, entry: { parts: readonly unknown[]; body: Buffer }): void {
    this.pages.set(key, entry);
    this.bytes += costOf(key, entry.body);
    for (const oldest of this.pages.keys()) {
      if (this.bytes <= this.budgetBytes && this.pages.size <= MAX_PAGES) break;
      this.forget(oldest);
    }
  }

  private forget(key: string): void {
    const entry = this.pages.get(key);
    if (entry === undefined) return;
    this.pages.delete(key);
    this.bytes -= costOf(key, entry.body);
  }
}

/** What one page counts against the budget: its body, its key (two bytes a character) and the rest. */
function costOf(key: string, body: Buffer): number {
  return body.length + key.length * 2 + ENTRY_OVERHEAD_BYTES;
}

function sameParts(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i += 1) if (a[i] !== b[i]) return false;
  return true;
}
