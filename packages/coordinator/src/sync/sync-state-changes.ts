import { contentHash, deleteSyncItems, putSyncItems, recordSyncedCommit, recordSyncedSpecs, type Queryable, type SyncItemRecord } from '@trellis/store';
import type { ItemRef } from './sync-items.js';

/** The sync state an item gets when this side changed it while a step was writing: both sides changed, so it shows as a conflict. */
export function bothChanged(ref: ItemRef, row: SyncItemRecord | undefined, remote: string | undefined, commit: string): SyncItemRecord {
  return { kind: ref.kind, name: ref.name, syncedHash: row?.syncedHash ?? null, remoteHash: remote !== undefined ? contentHash(remote) : null, syncedCommit: row?.syncedCommit ?? commit };
}

/**
 * The sync state changes of one step, gathered and then written together in one transaction
 * (one statement per table), so a step's state never commits half-way.
 */
export class SyncStateChanges {
  private readonly puts: SyncItemRecord[] = [];
  private readonly drops: ItemRef[] = [];
  private readonly specs: Array<{ specHash: string; commit: string }> = [];

  /**
   * Both sides hold `content` as of `commit`. For a DAG the commit is also noted against the
   * text's hash, so a run of this exact definition names the commit it came from.
   */
  agreed(ref: ItemRef, content: string, commit: string): void {
    const hash = contentHash(content);
    this.puts.push({ kind: ref.kind, name: ref.name, syncedHash: hash, remoteHash: hash, syncedCommit: commit });
    if (ref.kind === 'dag') this.specs.push({ specHash: hash, commit });
  }

  put(record: SyncItemRecord): void {
    this.puts.push(record);
  }

  drop(ref: ItemRef): void {
    this.drops.push({ kind: ref.kind, name: ref.name });
  }

  /** Writes everything gathered with `tx`; `commit`: the repository commit this side now stands at. */
  async write(tx: Queryable, commit?: string): Promise<void> {
    await deleteSyncItems(tx, this.drops);
    await putSyncItems(tx, this.puts);
    await recordSyncedSpecs(tx, this.specs);
    if (commit !== undefined) await recordSyncedCommit(tx, commit);
  }
}
