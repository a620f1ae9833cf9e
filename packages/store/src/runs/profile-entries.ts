import type { Queryable } from '../db/types.js';
import type { ProfileEntryMeta } from './record.js';

/**
 * Records the profile entries an attempt resolved as it started (they may differ from those
 * of the run's start: profiles change between attempts). Only that attempt's write counts.
 */
export async function recordProfileEntries(q: Queryable, runId: number, attemptId: string, entries: ProfileEntryMeta[]): Promise<void> {
  await q.query('UPDATE runs SET profile_entries = $3::jsonb WHERE id = $1 AND attempt_id = $2', [runId, attemptId, JSON.stringify(entries)]);
}
