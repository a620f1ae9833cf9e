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

/** The newest versions of several kinds in one read: a check of a cache of each costs one statement. */
export async function storedFilesVersions(q: Queryable, kinds: StoredFileKind[]): Promise<Map<StoredFileKind, number>> {
  const rows = await q.query<{ kind: StoredFileKind; version: number }>('SELECT kind, version::float8 AS version FROM stored_file_versions WHERE kind = ANY($1::text[])', [kinds]);
  return new Map(rows.map((row) => [row.kind, row.version]));
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

const PUT = `INSERT INTO stored_files AS f (kind, name, content, content_hash, version, updated_by, origin) VALUES ($1, $2, $3, $4, $5, $6, $7)
  ON CONFLICT (kind, name) DO UPDATE SET content = EXCLUDED.content, content_hash = EXCLUDED.content_hash, version = EXCLUDED.version,
    created_at = CASE WHEN f.content IS NULL THEN now() ELSE f.created_at END, updated_at = now(), updated_by = EXCLUDED.updated_by, origin = EXCLUDED.origin
  WHERE f.content_hash IS DISTINCT FROM EXCLUDED.content_hash
  RETURNING ${COLUMNS}`;

/** Creates or replaces (an import from a directory); undefined when the content is already this. */
export function putStoredFile(db: Db, kind: StoredFileKind, name: string, content: string, writer: StoredFileWriter): Promise<StoredFile | undefined> {
  return writeKind(db, kind, async (tx, version) => first(await tx.query<StoredRow>(PUT, [kind, name, bytes(content), contentHash(content), version, writer.by, writer.origin])));
}

/** Creates or replaces many files in one transaction (one version, one commit): a directory imported at start. Resolves to how many changed. */
export async function putStoredFiles(db: Db, kind: StoredFileKind, files: Array<{ name: string; content: string }>, writer: StoredFileWriter): Promise<number> {
  if (files.length === 0) return 0;
  const changed = await writeKind(db, kind, async (tx, version) => {
    let count = 0;
    for (const { name, content } of files) count += (await tx.query(PUT, [kind, name, bytes(content), contentHash(content), version, writer.by, writer.origin])).length;
    return count > 0 ? count : undefined;
  });
  return changed ?? 0;
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
