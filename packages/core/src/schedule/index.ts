/**
 * Schedule entries and next-run computation.
 *
 * Daylight-saving policy (Vixie cron's, as croner implements it; pinned by tests):
 *  - Fixed-time jobs (no `*` wildcard or step in the minute and hour fields, e.g. `30 2 * * *`
 *    or `0 1,13 * * *`): a local time that does not exist (spring forward) runs once at the first
 *    valid instant after the gap, the same day; a local time that occurs twice (fall back) runs
 *    once, at its first occurrence.
 *  - Interval jobs (a wildcard or step in minute or hour, e.g. `*\/15 * * * *`, `30 * * * *`):
 *    they follow real time; a time inside a gap does not exist and is skipped, and the
 *    repeated hour runs on both occurrences, so there is one run per real interval.
 */
import { Cron } from 'croner';
import { z } from 'zod';
import type { AtScheduleEntry, CronScheduleEntry, ScheduleEntry, ScheduleSet } from '../model/dag.js';
import { Issues, describeType } from '../spec/issues.js';

const ALIASES: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

/** Upper bound of runs returned by one `dueTimes` call: a catch-up never floods the queue. */
export const MAX_DUE_TIMES = 1000;

function cronOf(expression: string, timezone: string | undefined): Cron {
  return new Cron(expression, { paused: true, mode: '5-part', fixedTimeRule: 'no-wildcard', ...(timezone !== undefined ? { timezone } : {}) });
}

export function isValidTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** Canonical five-field form of a cron string, or the reason it is not one. */
export function canonicalCron(text: string): { expression: string; timezone?: string } | { error: string } {
  let rest = text.trim().replace(/\s+/g, ' ');
  let timezone: string | undefined;
  const tz = /^CRON_TZ=(\S+)\s+(.*)$/.exec(rest);
  if (tz !== null) {
    timezone = tz[1] ?? '';
    rest = tz[2] ?? '';
    if (!isValidTimeZone(timezone)) return { error: `unknown time zone "${timezone}" in CRON_TZ` };
  }
  const expression = ALIASES[rest.toLowerCase()] ?? rest;
  if (expression.startsWith('@')) return { error: `unknown schedule alias "${rest}"` };
  const fields = expression.split(' ');
  if (fields.length !== 5) return { error: `invalid cron expression "${rest}" (expected 5 fields: minute hour day-of-month month day-of-week, got ${fields.length})` };
  try {
    cronOf(expression, timezone);
  } catch (error) {
    return { error: `invalid cron expression "${rest}" (${(error as Error).message})` };
  }
  return timezone !== undefined ? { expression, timezone } : { expression };
}

const profileSchema = z.string().regex(/^[a-z0-9][a-z0-9._-]*$/, 'must be a lowercase profile name');
const atSchema = z.strictObject({
  kind: z.literal('at'),
  at: z.string({ error: 'must be an RFC 3339 timestamp' }),
  profile: profileSchema.optional(),
});
const cronObjectSchema = z.strictObject({
  expression: z.string().optional(),
  cron: z.string().optional(),
  profile: profileSchema.optional(),
});

/** RFC 3339 with an explicit offset or Z, normalised to ISO UTC. */
function parseAt(text: string): string | undefined {
  if (!/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i.test(text.trim())) return undefined;
  const ms = Date.parse(text.trim().replace(' ', 'T'));
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

function parseEntry(raw: unknown, path: string, issues: Issues): ScheduleEntry | undefined {
  if (typeof raw === 'string') return parseCronText(raw, undefined, path, issues);
  if (raw !== null && typeof raw === 'object' && !Array.isArray(raw) && (raw as Record<string, unknown>).kind === 'at') {
    const value = issues.check(atSchema, raw, path);
    if (value === undefined) return undefined;
    const at = parseAt(value.at);
    if (at === undefined) {
      issues.add(`${path}.at`, `must be an RFC 3339 timestamp with an offset or Z, got "${value.at}"`);
      return undefined;
    }
    const entry: AtScheduleEntry = { kind: 'at', at };
    if (value.profile !== undefined) entry.profile = value.profile;
    return entry;
  }
  if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) {
    const value = issues.check(cronObjectSchema, raw, path);
    if (value === undefined) return undefined;
    const text = value.expression ?? value.cron;
    if (text === undefined) {
      issues.add(path, 'needs `expression` (a cron string) or `kind: at` with `at`');
      return undefined;
    }
    return parseCronText(text, value.profile, path, issues);
  }
  issues.add(path, `must be a cron string or a schedule entry, got ${describeType(raw)}`);
  return undefined;
}

function parseCronText(text: string, profile: string | undefined, path: string, issues: Issues): CronScheduleEntry | undefined {
  const parsed = canonicalCron(text);
  if ('error' in parsed) {
    issues.add(path, parsed.error);
    return undefined;
  }
  const entry: CronScheduleEntry = { kind: 'cron', expression: parsed.expression };
  if (parsed.timezone !== undefined) entry.timezone = parsed.timezone;
  if (profile !== undefined) entry.profile = profile;
  return entry;
}

function parseList(raw: unknown, path: string, issues: Issues): ScheduleEntry[] {
  if (raw === undefined || raw === null) return [];
  const items = Array.isArray(raw) ? raw : [raw];
  const out: ScheduleEntry[] = [];
  items.forEach((item, i) => {
    const entry = parseEntry(item, Array.isArray(raw) ? `${path}[${i}]` : path, issues);
    if (entry !== undefined) out.push(entry);
  });
  return out;
}

const SET_KEYS = new Set(['start', 'stop', 'restart']);

/** `schedule:` as a string, an array, or an object with start/stop/restart lists. */
export function parseScheduleField(raw: unknown, path: string): { value: ScheduleSet; errors: string[] } {
  const issues = new Issues();
  const value: ScheduleSet = { start: [], stop: [], restart: [] };
  if (raw === undefined || raw === null) return { value, errors: [] };
  const isSet = typeof raw === 'object' && !Array.isArray(raw) && Object.keys(raw).some((k) => SET_KEYS.has(k));
  if (isSet) {
    const record = raw as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      if (!SET_KEYS.has(key)) issues.add(`${path}.${key}`, 'unknown field (expected start, stop or restart)');
    }
    value.start = parseList(record.start, `${path}.start`, issues);
    value.stop = parseList(record.stop, `${path}.stop`, issues);
    value.restart = parseList(record.restart, `${path}.restart`, issues);
  } else {
    value.start = parseList(raw, path, issues);
  }
  return { value, errors: issues.list };
}

/** Up to `count` run times of one entry strictly after `after`. */
export function nextRunTimes(entry: ScheduleEntry, after: Date, count: number, defaultTimezone?: string): Date[] {
  if (entry.kind === 'at') {
    const at = new Date(entry.at);
    return at.getTime() > after.getTime() && count > 0 ? [at] : [];
  }
  const cron = cronOf(entry.expression, entry.timezone ?? defaultTimezone);
  return cron.nextRuns(count, after).filter((d) => d.getTime() > after.getTime());
}

/** The earliest upcoming start over a schedule's start entries. */
export function nextStartRun(set: ScheduleSet, after: Date, defaultTimezone?: string): Date | undefined {
  let best: Date | undefined;
  for (const entry of set.start) {
    const [next] = nextRunTimes(entry, after, 1, defaultTimezone);
    if (next !== undefined && (best === undefined || next.getTime() < best.getTime())) best = next;
  }
  return best;
}

/** Run times of an entry in (afterExclusive, untilInclusive], oldest first, at most MAX_DUE_TIMES. */
export function dueTimes(entry: ScheduleEntry, afterExclusive: Date, untilInclusive: Date, defaultTimezone?: string): Date[] {
  if (entry.kind === 'at') {
    const at = new Date(entry.at).getTime();
    return at > afterExclusive.getTime() && at <= untilInclusive.getTime() ? [new Date(at)] : [];
  }
  const cron = cronOf(entry.expression, entry.timezone ?? defaultTimezone);
  const out: Date[] = [];
  let cursor = afterExclusive;
  while (out.length < MAX_DUE_TIMES) {
    const next = cron.nextRun(cursor);
    if (next === null || next.getTime() > untilInclusive.getTime()) break;
    if (next.getTime() <= cursor.getTime()) break;
    out.push(next);
    cursor = next;
  }
  return out;
}

/** The contract's schedule item: `{expression}` (with its CRON_TZ prefix) or `{kind: 'at', at}`. */
export function scheduleEntryPayload(entry: ScheduleEntry): { expression: string } | { kind: 'at'; at: string } {
  if (entry.kind === 'at') return { kind: 'at', at: entry.at };
  return { expression: entry.timezone !== undefined ? `CRON_TZ=${entry.timezone} ${entry.expression}` : entry.expression };
}
