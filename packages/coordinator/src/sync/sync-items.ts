import { isValidDagFileName } from '@trellis/core';
import { isValidDocumentId } from '../documents/document-id.js';

export type SyncKind = 'dag' | 'doc';
export type SyncStatus = 'synced' | 'modified' | 'untracked' | 'conflict' | 'missing';
export const SYNC_STATUSES: readonly SyncStatus[] = ['synced', 'modified', 'untracked', 'conflict', 'missing'];

/** The folder, under the sync path, that holds documents. */
const DOCS_FOLDER = 'docs/';

/**
 * An item's id is its path under the sync path without the extension: a DAG's file name
 * (`<fileName>.yaml` in the repository), or `docs/` and a document id (`docs/<id>.md`).
 */
export interface ItemRef {
  kind: SyncKind;
  /** The DAG file name or document id. */
  name: string;
}

export function itemIdOf(ref: ItemRef): string {
  return ref.kind === 'dag' ? ref.name : `${DOCS_FOLDER}${ref.name}`;
}

/** The item an id names; undefined when it is neither a DAG file name nor `docs/` and a document id. */
export function parseItemId(itemId: string): ItemRef | undefined {
  if (itemId.startsWith(DOCS_FOLDER)) {
    const name = itemId.slice(DOCS_FOLDER.length);
    return isValidDocumentId(name) ? { kind: 'doc', name } : undefined;
  }
  return isValidDagFileName(itemId) ? { kind: 'dag', name: itemId } : undefined;
}

/** The item's file, relative to the sync path. */
export function relativeFileOf(ref: ItemRef): string {
  return ref.kind === 'dag' ? `${ref.name}.yaml` : `${DOCS_FOLDER}${ref.name}.md`;
}

/** The item a file under the sync path holds; undefined for files that are neither (skipped). */
export function itemOfFile(relative: string): ItemRef | undefined {
  if (relative.startsWith(DOCS_FOLDER) && relative.endsWith('.md')) {
    const name = relative.slice(DOCS_FOLDER.length, -'.md'.length);
    return isValidDocumentId(name) ? { kind: 'doc', name } : undefined;
  }
  if (relative.endsWith('.yaml') && !relative.includes('/')) {
    const name = relative.slice(0, -'.yaml'.length);
    return isValidDagFileName(name) ? { kind: 'dag', name } : undefined;
  }
  return undefined;
}

/** The three versions of an item by content hash: this side's, the last agreed one, the repository's at the last fetch. */
export interface ItemHashes {
  local: string | undefined;
  /** undefined: no state entry; null: seen on both sides, never agreed. */
  synced: string | null | undefined;
  remote: string | null | undefined;
}

/** An item's status from its hashes (the same on every coordinator: no fetch needed). */
export function statusOf({ local, synced, remote }: ItemHashes): SyncStatus | undefined {
  if (synced === undefined) return local !== undefined ? 'untracked' : undefined;
  if (local === undefined) return 'missing';
  if (local === remote) return 'synced';
  if (remote !== synced) return 'conflict';
  return local === synced ? 'synced' : 'modified';
}
