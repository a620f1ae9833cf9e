import type { Db, Queryable } from '../db/types.js';
import type { SealedSecret } from '../profiles/profiles.js';

/** The sync settings as the coordinator validated them (JSON), the sealed token and the last pull. */
export interface SyncConfigRecord {
  settings: Record<string, unknown>;
  token: SealedSecret | undefined;
  lastSyncAt: Date | undefined;
  lastSyncCommit: string | undefined;
}

export interface SyncItemRecord {
  kind: 'dag' | 'doc';
  name: string;
  /** The content hash both sides last agreed on; null: never agreed (both sides had it differently). */
  syncedHash: string | null;
  /** The content hash in the repository at the last fetch; null: the repository does not have it. */
  remoteHash: string | null;
  syncedCommit: string;
}

interface ConfigRow {
  settings: Record<string, unknown>;
  keyId: string | null;
  nonce: Uint8Array | null;
  ciphertext: Uint8Array | null;
  authTag: Uint8Array | null;
  lastSyncAt: Date | null;
  lastSyncCommit: string | null;
}

const buffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

export async function getSyncConfig(q: Queryable): Promise<SyncConfigRecord | undefined> {
  const [row] = await q.query<ConfigRow>(`SELECT settings, token_key_id AS "keyId", token_nonce AS nonce, token_ciphertext AS ciphertext, token_auth_tag AS "authTag",
    last_sync_at AS "lastSyncAt", last_sync_commit AS "lastSyncCommit" FROM sync_config WHERE id = 1`);
  if (row === undefined) return undefined;
  const token = row.keyId !== null && row.nonce !== null && row.ciphertext !== null && row.authTag !== null
    ? { keyId: row.keyId, nonce: buffer(row.nonce), ciphertext: buffer(row.ciphertext), authTag: buffer(row.authTag) }
    : undefined;
  return { settings: row.settings, token, lastSyncAt: row.lastSyncAt ?? undefined, lastSyncCommit: row.lastSyncCommit ?? undefined };
}

/** Stores the settings; `token` undefined keeps the stored token, null removes it. */
export async function putSyncConfig(q: Queryable, settings: Record<string, unknown>, token: SealedSecret | null | undefined): Promise<void> {
  await q.query(
    `INSERT INTO sync_config (id, settings) VALUES (1, $1::jsonb) ON CONFLICT (id) DO UPDATE SET settings = EXCLUDED.settings, updated_at = now()`,
    [JSON.stringify(settings)],
  );
  if (token === undefined) return;
  await q.query('UPDATE sync_config SET token_key_id = $1, token_nonce = $2, token_ciphertext = $3, token_auth_tag = $4 WHERE id = 1', [
    token?.keyId ?? null, token?.nonce ?? null, token?.ciphertext ?? null, token?.authTag ?? null,
  ]);
}

/** Replaces the sealed token if it is still the one `expected` names (a key rotation re-seals it). */
export async function resealSyncToken(q: Queryable, expected: { keyId: string; nonce: Buffer }, sealed: SealedSecret): Promise<boolean> {
  const rows = await q.query(
    'UPDATE sync_config SET token_key_id = $3, token_nonce = $4, token_ciphertext = $5, token_auth_tag = $6 WHERE id = 1 AND token_key_id = $1 AND token_nonce = $2 RETURNING id',
    [expected.keyId, expected.nonce, sealed.keyId, sealed.nonce, sealed.ciphertext, sealed.authTag],
  );
  return rows.length > 0;
}

export async function recordSyncedCommit(q: Queryable, commit: string): Promise<void> {
  await q.query('UPDATE sync_config SET last_sync_at = now(), last_sync_commit = $1 WHERE id = 1', [commit]);
}

export async function listSyncItems(q: Queryable): Promise<SyncItemRecord[]> {
  return q.query<SyncItemRecord>('SELECT kind, name, synced_hash AS "syncedHash", remote_hash AS "remoteHash", synced_commit AS "syncedCommit" FROM sync_items ORDER BY kind, name');
}

/** Upserts many entries in one statement (the entries as parallel arrays). */
export async function putSyncItems(q: Queryable, items: SyncItemRecord[]): Promise<void> {
  if (items.length === 0) return;
  await q.query(
    `INSERT INTO sync_items (kind, name, synced_hash, remote_hash, synced_commit)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])
     ON CONFLICT (kind, name) DO UPDATE SET synced_hash = EXCLUDED.synced_hash, remote_hash = EXCLUDED.remote_hash, synced_commit = EXCLUDED.synced_commit, updated_at = now()`,
    [items.map((i) => i.kind), items.map((i) => i.name), items.map((i) => i.syncedHash), items.map((i) => i.remoteHash), items.map((i) => i.syncedCommit)],
  );
}

export async function deleteSyncItem(q: Queryable, kind: SyncItemRecord['kind'], name: string): Promise<boolean> {
  return (await q.query('DELETE FROM sync_items WHERE kind = $1 AND name = $2 RETURNING name', [kind, name])).length > 0;
}

/** Deletes many entries in one statement. */
export async function deleteSyncItems(q: Queryable, refs: Array<Pick<SyncItemRecord, 'kind' | 'name'>>): Promise<void> {
  if (refs.length === 0) return;
  await q.query('DELETE FROM sync_items s USING unnest($1::text[], $2::text[]) AS r(kind, name) WHERE s.kind = r.kind AND s.name = r.name', [refs.map((r) => r.kind), refs.map((r) => r.name)]);
}

/** Any constant shared by every coordinator: the advisory lock that lets one of them sync at a time. */
const SYNC_LOCK = 7_320_028;

/**
 * Runs `fn` while holding the sync lock: a transaction-scoped advisory lock on PostgreSQL, so a
 * coordinator that dies mid-sync releases it with its connection. PGlite is one coordinator by
 * construction, and one session (a held transaction would block `fn`'s own queries): the
 * caller's in-process exclusion is all there is.
 */
export async function withSyncLock<T>(db: Db, fn: () => Promise<T>): Promise<T> {
  if (!db.capabilities.advisoryLocks) return fn();
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [SYNC_LOCK]);
    return fn();
  });
}

/** Notes the commits DAG definitions' texts came from (see migration 0029), in one statement; the first one of a text is kept. */
export async function recordSyncedSpecs(q: Queryable, specs: Array<{ specHash: string; commit: string }>): Promise<void> {
  if (specs.length === 0) return;
  await q.query('INSERT INTO synced_specs (spec_hash, git_commit) SELECT DISTINCT ON (h) h, c FROM unnest($1::text[], $2::text[]) AS s(h, c) ON CONFLICT (spec_hash) DO NOTHING', [specs.map((s) => s.specHash), specs.map((s) => s.commit)]);
}

/** The commit a definition text came from through sync; undefined when it did not. */
export async function syncedSpecCommit(q: Queryable, specHash: string): Promise<string | undefined> {
  const [row] = await q.query<{ commit: string }>('SELECT git_commit AS commit FROM synced_specs WHERE spec_hash = $1', [specHash]);
  return row?.commit;
}
