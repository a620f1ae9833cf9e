/**
 * Run-time computation for schedule entries. Cron entries follow the daylight-saving policy
 * described in ./cron.ts; `defaultTimezone` (the server's configured zone) applies to entries
 * without `CRON_TZ`, and absent it the process zone. An invalid `defaultTimezone` throws
 * (config validation rejects it earlier).
 */
import type { ScheduleEntry, ScheduleSet } from '../model/dag.js';
import { compileCron } from './cron.js';

/** Upper bound of run times one `dueTimes` call returns: a catch-up never floods the queue. */
export const MAX_DUE_TIMES = 1000;

/** Up to `count` run times of one entry strictly after `after`, oldest first. */
export function nextRunTimes(entry: ScheduleEntry, after: Date, count: number, defaultTimezone?: string): Date[] {
  if (count < 1) return [];
  if (entry.kind === 'at') {
    const at = new Date(entry.at);
    return at.getTime() > after.getTime() ? [at] : [];
  }
  const cron = compileCron(entry.expression, entry.timezone ?? defaultTimezone);
  return cron.nextRuns(Math.floor(count), after).filter((d) => d.getTime() > after.getTime());
}

/** The earliest run strictly after `after` over a schedule's start entries (one-offs included). */
export function nextStartRun(set: ScheduleSet, after: Date, defaultTimezone?: string): Date | undefined {
  let best: Date | undefined;
  for (const entry of set.start) {
    const [next] = nextRunTimes(entry, after, 1, defaultTimezone);
    if (next !== undefined && (best === undefined || next.getTime() < best.getTime())) best = next;
  }
  return best;
}

/**
 * Run times of an entry in (afterExclusive, untilInclusive], oldest first, at most MAX_DUE_TIMES.
 * A scheduler ticking on minute boundaries asks this for (lastTick, thisTick]: consecutive windows
 * never repeat or lose a run, whatever DST does in between (the result depends only on the
 * window, not on earlier calls). A one-off is due in the window that contains its time.
 */
export function dueTimes(entry: ScheduleEntry, afterExclusive: Date, untilInclusive: Date, defaultTimezone?: string): Date[] {
  const until = untilInclusive.getTime();
  if (entry.kind === 'at') {
    const at = new Date(entry.at).getTime();
    return at > afterExclusive.getTime() && at <= until ? [new Date(at)] : [];
  }
  const cron = compileCron(entry.expression, entry.timezone ?? defaultTimezone);
  const out: Date[] = [];
  let cursor = afterExclusive;
  while (out.length < MAX_DUE_TIMES) {
    const next = cron.nextRun(cursor);
    if (next === null || next.getTime() > until || next.getTime() <= cursor.getTime()) break;
    out.push(next);
    cursor = next;
  }
  return out;
}

/** The latest run time of a cron entry strictly before `before` (a one-off: its time, if earlier). */
export function previousRunTime(entry: ScheduleEntry, before: Date, defaultTimezone?: string): Date | undefined {
  if (entry.kind === 'at') {
    const at = new Date(entry.at);
    return at.getTime() < before.getTime() ? at : undefined;
  }
  const [previous] = compileCron(entry.expression, entry.timezone ?? defaultTimezone).previousRuns(1, before);
  return previous !== undefined && previous.getTime() < before.getTime() ? previous : undefined;
}
