import type { Queryable } from '../db/types.js';
import { RUN_SUMMARY_JSON } from './record.js';

/** A run as a list finds it: its id and the version of its row, both as text. */
export interface RunVersion {
  id: string;
  version: string;
}

/**
 * A runs row's version for RunSummaryCache: its xmin, the transaction that wrote it. Every
 * committed change of a row writes a new version of it with its writer's xmin, so, read outside
 * the writing transaction, an id and an xmin name one content of the row (freezing keeps xmin as
 * it was, PostgreSQL 9.4 and later). Only a row left unchanged while 2^32 transactions pass and
 * then changed by the one whose 32-bit id comes round again could be mistaken for the version
 * held: a bounded cache forgets long before that.
 */
export const RUN_VERSION = 'xmin::text';

/** What a summary cache holds by default: the runs of some forty list pages. */
const DEFAULT_CAPACITY = 4096;

/**
 * Run summaries as the API lists them (RUN_SUMMARY_JSON, which must read nothing but the runs
 * row for its version to cover it), kept by run id and row version, the least recently used
 * forgotten first. Building that JSON was two thirds of what PostgreSQL spent
 * on a page of 100 runs (1.0 of 1.5 ms for the DAG list's newest runs; 0.93 of 1.0 ms for the run
 * list), and a list is mostly read again unchanged: a page then reads ids and versions, and builds
 * only what changed. Right with any number of coordinators, as the version is the database's.
 */
export class RunSummaryCache {
  private readonly entries = new Map<string, { version: string; json: string }>();

  constructor(private readonly capacity = DEFAULT_CAPACITY) {}

  get size(): number {
    return this.entries.size;
  }

  /**
   * The summaries of `runs` in their order, built by the database for those not held at their
   * version. The build is a second statement: a run changed since the list read it shows as it
   * is now (as on a page read a moment later), and one deleted meanwhile is undefined.
   */
  async summaries(q: Queryable, runs: RunVersion[]): Promise<Array<string | undefined>> {
    const found = runs.map((run) => this.take(run));
    const missing = runs.filter((_, i) => found[i] === undefined).map((run) => run.id);
    if (missing.length === 0) return found;
    const rows = await q.query<RunVersion & { json: string }>(`SELECT id::text AS id, ${RUN_VERSION} AS version, ${RUN_SUMMARY_JSON} AS json FROM runs WHERE id = ANY($1::bigint[])`, [missing]);
    // A row changed since the list read it comes back newer than the list saw: the newer one is shown.
    const built = new Map(rows.map((row) => [row.id, row.json]));
    for (const row of rows) this.put(row);
    return runs.map((run, i) => found[i] ?? built.get(run.id));
  }

  private take(run: RunVersion): string | undefined {
    const entry = this.entries.get(run.id);
    if (entry === undefined || entry.version !== run.version) return undefined;
    // Map keeps insertion order: taking an entry out and back in makes it the most recent.
    this.entries.delete(run.id);
    this.entries.set(run.id, entry);
    return entry.json;
  }

  private put(row: RunVersion & { json: string }): void {
    this.entries.delete(row.id);
    this.entries.set(row.id, { version: row.version, json: row.json });
    if (this.entries.size <= this.capacity) return;
    const oldest = this.entries.keys().next();
    if (oldest.done !== true) this.entries.delete(oldest.value);
  }
}
