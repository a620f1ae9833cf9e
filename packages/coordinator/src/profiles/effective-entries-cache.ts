import type { ProfileEntryRecord, StoredSecret } from '@trellis/store';

/** An entry that wins for its key, with the layer it comes from. */
export type EffectiveEntry = ProfileEntryRecord & { layer: 'global' | 'workspace' | 'profile' };

/** What a run's entries resolve to before secrets are opened: the winning entries and the sealed values they point at. */
export interface EffectiveEntries {
  entries: EffectiveEntry[];
  sealed: Map<string, StoredSecret>;
}

/** Distinct (workspace, profile) pairs kept at once; more are rare (a pair per workspace and profile in use). */
const MAX_PAIRS = 1000;

/**
 * The effective entries of each (workspace, profile) pair as of one value of the database's
 * profile counter (migration 0031). Every change to workspaces, profiles, entries or secrets
 * moves the counter in its own transaction, so entries read after the counter showed `v` are
 * at least as new as `v`, and all pairs kept for an older value go at once when a newer one is
 * seen. A pair that fails to resolve (a missing or disabled profile) is not kept.
 */
export class EffectiveEntriesCache {
  private version = -1;
  private readonly pairs = new Map<string, EffectiveEntries>();

  get(version: number, key: string): EffectiveEntries | undefined {
    return version === this.version ? this.pairs.get(key) : undefined;
  }

  /** Keeps `entries`, read after the counter showed `version`; a value older than what is kept is dropped. */
  set(version: number, key: string, entries: EffectiveEntries): void {
    if (version < this.version) return;
    if (version > this.version || this.pairs.size >= MAX_PAIRS) {
      this.pairs.clear();
      this.version = version;
    }
    this.pairs.set(key, entries);
  }
}

/** The cache key of a resolve input: names cannot hold NUL. */
export function pairKey(workspaceName: string | undefined, profileName: string | undefined): string {
  return `${workspaceName ?? ''}\u0000${profileName ?? ''}`;
}
