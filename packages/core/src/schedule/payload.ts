import type { ScheduleEntry } from '../model/dag.js';

/** The contract's schedule item: `{expression}` (with its CRON_TZ prefix) or `{kind: 'at', at}`. */
export function scheduleEntryPayload(entry: ScheduleEntry): { expression: string } | { kind: 'at'; at: string } {
  if (entry.kind === 'at') return { kind: 'at', at: entry.at };
  return { expression: entry.timezone !== undefined ? `CRON_TZ=${entry.timezone} ${entry.expression}` : entry.expression };
}
