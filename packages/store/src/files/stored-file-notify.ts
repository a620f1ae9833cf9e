import type { Db } from '../db/types.js';
/** What a stored file is: a DAG definition, the base configuration (one row, `base`), or a document. */
export type StoredFileKind = 'dag' | 'base' | 'doc';

/** The channel on which a write announces `<kind>:<version>`. */
export const STORED_FILES_CHANNEL = 'trellis_stored_files';

type Announcement = (kind: StoredFileKind | undefined) => void;

/** Listeners of backends whose notifications stay in this process (PGlite), by database. */
const local = new WeakMap<Db, Set<Announcement>>();

/** Tells this process's listeners of a committed write when the backend cannot notify them (PGlite). */
export function announceStoredFiles(db: Db, kind: StoredFileKind): void {
  if (db.listen !== undefined) return;
  for (const listener of local.get(db) ?? []) listener(kind);
}

function kindOf(payload: string): StoredFileKind | undefined {
  const kind = payload.split(':')[0];
  return kind === 'dag' || kind === 'base' || kind === 'doc' ? kind : undefined;
}

/**
 * Calls `onChange` after each write of stored files from any coordinator on this database, with
 * the kind written; undefined (after a lost connection) means any kind may have changed.
 * Resolves to the function that stops listening.
 */
export async function listenStoredFiles(db: Db, onChange: Announcement, onError: (error: Error) => void): Promise<() => Promise<void>> {
  if (db.listen !== undefined) return db.listen(STORED_FILES_CHANNEL, (payload) => onChange(kindOf(payload)), onError);
  const listeners = local.get(db) ?? new Set<Announcement>();
  local.set(db, listeners);
  listeners.add(onChange);
  return () => {
    listeners.delete(onChange);
    return Promise.resolve();
  };
}
