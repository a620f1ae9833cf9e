import { createHash } from 'node:crypto';
import type { Db, Queryable } from '../db/types.js';
import { announceStoredFiles, STORED_FILES_CHANNEL, type StoredFileKind } from './stored-file-notify.js';

export interface StoredFile {
  kind: StoredFileKind;
  name: string;
  /** null: deleted (a tombstone, kept so catching up by version sees the delete). */
  content: string | null;
  contentHash: string | null;
  version: number;
  createdAt: Date;
  updatedAt: Date;
  updatedBy: string;
  /** The coordinator instance that wrote it. */
  origin: string;
}

/** Who writes: the actor recorded as `updatedBy`, and the coordinator instance (`origin`). */
export interface StoredFileWriter {
  by: string;
  origin: string;
}

export type RenameOutcome = { renamed: true; source: StoredFile; target: StoredFile } | { renamed: false; reason: 'missing' | 'taken' };

const COLUMNS = `kind, name, content, content_hash AS "contentHash", version::float8 AS version,
  created_at AS "createdAt", updated_at AS "updatedAt", updated_by AS "updatedBy", origin`;

/** A row as it comes back: content as bytes (Buffer from pg, Uint8Array from PGlite). */
type StoredRow = Omit<StoredFile, 'content'> & { content: Uint8Array | null };

function fromRow(row: StoredRow): StoredFile {
  return { ...row, content: row.content !== null ? Buffer.from(row.content.buffer, row.content.byteOffset, row.content.byteLength).toString('utf8') : null };
}

function first(rows: StoredRow[]): StoredFile | undefined {
  return rows[0] !== undefined ? fromRow(rows[0]) : undefined;
}

function bytes(content: string): Buffer {
  return Buffer.from(content, 'utf8');
}

export function contentHash(content: string): string {
  return createHash('sha256').update(content).digest('hex');
}

/** The newest version of a kind: compared with a cache's to know whether it is behind. */
export async function storedFilesVersion(q: Queryable, kind: StoredFileKind): Promise<number> {
  const [row] = await q.query<{ version: number }>('SELECT version::float8 AS version FROM stored_file_versions WHERE kind = $1', [kind]);
  return row?.version ?? 0;
}

/** The counters an exact read of cached definitions checks: each kind's, and the profile counter (migration 0031). */
export interface StoredVersions {
  files: Map<StoredFileKind, number>;
  profiles: number;
}

/**
 * The newest versions of several kinds and the profile counter in one read: a check of a cache
 * of each costs one statement, and a run queued from the definitions read resolves its profile
 * entries as of the same moment without a statement of its own.
 */
export async function storedVersions(q: Queryable, kinds: StoredFileKind[]): Promise<StoredVersions> {
  const rows = await q.query<{ kind: StoredFileKind | ''; version: number }>(
    `SELECT kind, version::float8 AS version FROM stored_file_versions WHERE kind = ANY($1::text[])
     UNION ALL SELECT '', version::float8 FROM profile_version`,
    [kinds],
  );
  const files = new Map<StoredFileKind, number>();
  let profiles = 0;
  for (const row of rows) {
    if (row.kind === '') profiles = row.version;
    else files.set(row.kind, row.version);
  }
  return { files, profiles };
}

/** Every row of a kind written after `version` (tombstones included), oldest first. */
export async function storedFilesSince(q: Queryable, kind: StoredFileKind, version: number): Promise<StoredFile[]> {
  return (await q.query<StoredRow>(`SELECT ${COLUMNS} FROM stored_files WHERE kind = $1 AND version > $2 ORDER BY version, name`, [kind, version])).map(fromRow);
}

/** Leaves a write transaction without a change: the name was taken, or missing. */
class NoChange extends Error {}

/**
 * One write of a kind: takes the kind's next version (locking its counter row until commit, so
 * versions commit in order), lets `write` use it, and announces the version to every coordinator.
 * `write` returns undefined to roll back: nothing changed.
 */
async function writeKind<T>(db: Db, kind: StoredFileKind, write: (tx: Queryable, version: number) => Promise<T | undefined>): Promise<T | undefined> {
  let version = 0;
  let result: T | undefined;
  try {
    result = await db.transaction(async (tx) => {
      const [row] = await tx.query<{ version: number }>('UPDATE stored_file_versions SET version = version + 1 WHERE kind = $1 RETURNING version::float8 AS version', [kind]);
      version = row?.version ?? 0;
      const written = await write(tx, version);
      if (written === undefined) throw new NoChange();
      await tx.query('SELECT pg_notify($1, $2)', [STORED_FILES_CHANNEL, `${kind}:${version}`]);
      return written;
    });
  } catch (error) {
    if (error instanceof NoChange) return undefined;
    throw error;
  }
  announceStoredFiles(db, kind);
  return result;
}

/** Inserts into a free name (never used, or a tombstone); the one statement decides between concurrent creates. */
const CREATE = `INSERT INTO stored_files AS f (kind, name, content, content_hash, version, updated_by, origin) VALUES ($1, $2, $3, $4, $5, $6, $7)
  ON CONFLICT (kind, name) DO UPDATE SET content = EXCLUDED.content, content_hash = EXCLUDED.content_hash, version = EXCLUDED.version,
    created_at = now(), updated_at = now(), updated_by = EXCLUDED.updated_by, origin = EXCLUDED.origin
  WHERE f.content IS NULL
  RETURNING ${COLUMNS}`;

/** Stores a new file; undefined when a live file holds the name. */
export function createStoredFile(db: Db, kind: StoredFileKind, name: string, content: string, writer: StoredFileWriter): Promise<StoredFile | undefined> {
  return writeKind(db, kind, async (tx, version) => first(await tx.query<StoredRow>(CREATE, [kind, name, bytes(content), contentHash(content), version, writer.by, writer.origin])));
}

/** Replaces a live file's content; undefined when there is none. */
export function updateStoredFile(db: Db, kind: StoredFileKind, name: string, content: string, writer: StoredFileWriter): Promise<StoredFile | undefined> {
  return writeKind(db, kind, async (tx, version) => {
    return first(
      await tx.query<StoredRow>(
      `UPDATE stored_files SET content = $3, content_hash = $4, version = $5, updated_at = now(), updated_by = $6, origin = $7 WHERE kind = $1 AND name = $2 AND content IS NOT NULL RETURNING ${COLUMNS}`,
      [kind, name, bytes(content), contentHash(content), version, writer.by, writer.origin],
      ),
    );
  });
}

/** A write over an existing row (`f`), live or a tombstone; a tombstone's name starts a new life, so its creation time too. */
const REPLACE_ON_CONFLICT = `ON CONFLICT (kind, name) DO UPDATE SET content = EXCLUDED.content, content_hash = EXCLUDED.content_hash, version = EXCLUDED.version,
    created_at = CASE WHEN f.content IS NULL THEN now() ELSE f.created_at END, updated_at = now(), updated_by = EXCLUDED.updated_by, origin = EXCLUDED.origin`;

const PUT = `INSERT INTO stored_files AS f (kind, name, content, content_hash, version, updated_by, origin) VALUES ($1, $2, $3, $4, $5, $6, $7)
  ${REPLACE_ON_CONFLICT}
  WHERE f.content_hash IS DISTINCT FROM EXCLUDED.content_hash
  RETURNING ${COLUMNS}`;

/** Creates or replaces (an import from a directory); undefined when the content is already this. */
export function putStoredFile(db: Db, kind: StoredFileKind, name: string, content: string, writer: StoredFileWriter): Promise<StoredFile | undefined> {
  return writeKind(db, kind, async (tx, version) => first(await tx.query<StoredRow>(PUT, [kind, name, bytes(content), contentHash(content), version, writer.by, writer.origin])));
}

/** Rows per multi-row statement: bounds a statement's size (a DAG file is a few KB) while 1,000 files take two round trips. */
const CHUNK = 500;

function chunks<T>(items: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}

/** PUT for many rows at once: the files as parallel arrays ($2 names, $3 contents, $4 hashes), one version. */
const PUT_MANY = `INSERT INTO stored_files AS f (kind, name, content, content_hash, version, updated_by, origin)
  SELECT $1, i.name, i.content, i.content_hash, $5, $6, $7 FROM unnest($2::text[], $3::bytea[], $4::text[]) AS i(name, content, content_hash)
  ${REPLACE_ON_CONFLICT}
  WHERE f.content_hash IS DISTINCT FROM EXCLUDED.content_hash
  RETURNING name`;

/** Creates or replaces many files in one transaction (one version, one commit, a statement per chunk): a directory imported at start. Resolves to how many changed. */
export async function putStoredFiles(db: Db, kind: StoredFileKind, files: Array<{ name: string; content: string }>, writer: StoredFileWriter): Promise<number> {
  if (files.length === 0) return 0;
  const changed = await writeKind(db, kind, async (tx, version) => {
    let count = 0;
    for (const chunk of chunks(files)) {
      const rows = await tx.query(PUT_MANY, [kind, chunk.map((f) => f.name), chunk.map((f) => bytes(f.content)), chunk.map((f) => contentHash(f.content)), version, writer.by, writer.origin]);
      count += rows.length;
    }
    return count > 0 ? count : undefined;
  });
  return changed ?? 0;
}

/**
 * A change written only if the file is still as its writer last read it: `expectedHash` is the
 * live file's content hash then (null: there was no live file). `content` null deletes.
 */
export interface StoredFileSwap {
  kind: StoredFileKind;
  name: string;
  content: string | null;
  expectedHash: string | null;
}

/** `written`; `unchanged`: the file already held the content; `stale`: it changed since it was read, and was left alone. */
export interface StoredFileSwapOutcome {
  kind: StoredFileKind;
  name: string;
  outcome: 'written' | 'unchanged' | 'stale';
}

/**
 * The compare-and-swap of many rows in one statement: $2..$5 are the parallel arrays of names,
 * contents, content hashes and expected hashes. The file's current hash is read and the row
 * written by the same statement, while the transaction holds the kind's counter row (which
 * every writer of the kind takes first), so no other write of the kind lands in between.
 */
const SWAP_MANY = `WITH input AS (
    SELECT * FROM unnest($2::text[], $3::bytea[], $4::text[], $5::text[]) AS i(name, content, content_hash, expected_hash)
  ), seen AS (
    SELECT i.*, f.content_hash AS current_hash FROM input i LEFT JOIN stored_files f ON f.kind = $1 AND f.name = i.name
  ), written AS (
    INSERT INTO stored_files AS f (kind, name, content, content_hash, version, updated_by, origin)
    SELECT $1, name, content, content_hash, $6, $7, $8 FROM seen
    WHERE current_hash IS NOT DISTINCT FROM expected_hash AND current_hash IS DISTINCT FROM content_hash
    ${REPLACE_ON_CONFLICT}
    RETURNING name
  )
  SELECT s.name, CASE WHEN w.name IS NOT NULL THEN 'written' WHEN s.current_hash IS NOT DISTINCT FROM s.content_hash THEN 'unchanged' ELSE 'stale' END AS outcome
  FROM seen s LEFT JOIN written w ON w.name = s.name`;

/**
 * Writes many changes of any kinds, each only if its file is still as expected (see
 * StoredFileSwap), and runs `within` in the same transaction with the outcomes, so what the
 * caller records about them commits or rolls back with the files. Each kind changed takes one
 * version and one notification; a kind where nothing was written keeps its counter (a bump
 * without rows would send every cache to catch up on nothing).
 */
export async function swapStoredFiles<T>(db: Db, swaps: StoredFileSwap[], writer: StoredFileWriter, within: (tx: Queryable, outcomes: StoredFileSwapOutcome[]) => Promise<T>): Promise<{ outcomes: StoredFileSwapOutcome[]; result: T }> {
  const kinds = [...new Set(swaps.map((s) => s.kind))].sort();
  const changed: StoredFileKind[] = [];
  const done = await db.transaction(async (tx) => {
    // Counter rows locked in one order: writers of one kind wait, and two multi-kind writers cannot deadlock.
    const counters = await tx.query<{ kind: StoredFileKind; version: number }>('SELECT kind, version::float8 AS version FROM stored_file_versions WHERE kind = ANY($1::text[]) ORDER BY kind FOR UPDATE', [kinds]);
    const outcomes: StoredFileSwapOutcome[] = [];
    for (const { kind, version } of counters) {
      let written = 0;
      for (const chunk of chunks(swaps.filter((s) => s.kind === kind))) {
        const rows = await tx.query<{ name: string; outcome: StoredFileSwapOutcome['outcome'] }>(SWAP_MANY, [
          kind, chunk.map((s) => s.name), chunk.map((s) => (s.content !== null ? bytes(s.content) : null)), chunk.map((s) => (s.content !== null ? contentHash(s.content) : null)), chunk.map((s) => s.expectedHash), version + 1, writer.by, writer.origin,
        ]);
        for (const row of rows) outcomes.push({ kind, name: row.name, outcome: row.outcome });
        written += rows.filter((row) => row.outcome === 'written').length;
      }
      if (written === 0) continue;
      await tx.query('UPDATE stored_file_versions SET version = $2 WHERE kind = $1', [kind, version + 1]);
      await tx.query('SELECT pg_notify($1, $2)', [STORED_FILES_CHANNEL, `${kind}:${version + 1}`]);
      changed.push(kind);
    }
    return { outcomes, result: await within(tx, outcomes) };
  });
  for (const kind of changed) announceStoredFiles(db, kind);
  return done;
}

async function tombstone(tx: Queryable, kind: StoredFileKind, name: string, version: number, writer: StoredFileWriter): Promise<StoredFile | undefined> {
  return first(
    await tx.query<StoredRow>(
    `UPDATE stored_files SET content = NULL, content_hash = NULL, version = $3, updated_at = now(), updated_by = $4, origin = $5 WHERE kind = $1 AND name = $2 AND content IS NOT NULL RETURNING ${COLUMNS}`,
    [kind, name, version, writer.by, writer.origin],
    ),
  );
}

/** Deletes a live file (leaving its tombstone); undefined when there is none. */
export function deleteStoredFile(db: Db, kind: StoredFileKind, name: string, writer: StoredFileWriter): Promise<StoredFile | undefined> {
  return writeKind(db, kind, (tx, version) => tombstone(tx, kind, name, version, writer));
}

/** Moves a file to a free name in one transaction: the source missing or the target taken changes nothing. */
export async function renameStoredFile(db: Db, kind: StoredFileKind, from: string, to: string, writer: StoredFileWriter): Promise<RenameOutcome> {
  let reason: 'missing' | 'taken' = 'missing';
  const outcome = await writeKind(db, kind, async (tx, version): Promise<RenameOutcome | undefined> => {
    const [live] = await tx.query<{ content: Uint8Array; contentHash: string }>('SELECT content, content_hash AS "contentHash" FROM stored_files WHERE kind = $1 AND name = $2 AND content IS NOT NULL', [kind, from]);
    if (live === undefined) return undefined;
    const target = first(await tx.query<StoredRow>(CREATE, [kind, to, live.content, live.contentHash, version, writer.by, writer.origin]));
    reason = 'taken';
    if (target === undefined) return undefined;
    const source = await tombstone(tx, kind, from, version, writer);
    return source !== undefined ? { renamed: true, source, target } : undefined;
  });
  return outcome ?? { renamed: false, reason };
}
