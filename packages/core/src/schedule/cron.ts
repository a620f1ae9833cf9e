/**
 * Cron expressions: canonical five-field form, and the croner instance that computes run times
 * under Trellis's daylight-saving policy.
 *
 * Daylight-saving policy (pinned by test/schedule.dst.test.ts). A job is classified by its
 * HOUR field alone:
 *  - Fixed-time job: the hour field is a value, a list or a range, with no `*`, `?` or step
 *    (`30 2 * * *`, `0 1,13 * * *`, `*\/15 2 * * *`, `0 1-3 * * *`).
 *    - Spring forward: times that do not exist run once, at the first instant after the gap
 *      (02:30 in New York on 2026-03-08 runs at 03:00 EDT). All the times a job has in the gap
 *      collapse into that single run, which is also shared with a run due at 03:00 itself.
 *    - Fall back: times in the repeated hour run once, at their first occurrence (01:30 on
 *      2026-11-01 runs at 01:30 EDT, not again at 01:30 EST).
 *  - Interval job: the hour field has `*`, `?` or a step (`*\/15 * * * *`, `30 * * * *`,
 *    `0 *\/2 * * *`). It follows real elapsed time: a time in the gap does not exist and is
 *    skipped; a time in the repeated hour runs on both occurrences. So `30 * * * *` runs once per
 *    real hour through both transitions; a multi-hour step keeps its wall-clock slots, so
 *    `0 *\/2 * * *` is three real hours apart across either transition (00:00 -> 04:00 EDT,
 *    00:00 EDT -> 02:00 EST): wall-clock arithmetic forces that, nothing runs twice.
 *
 * croner (with `fixedTimeRule: 'no-wildcard'`) implements exactly this, except that it also
 * looks at the minute field: it would treat `*\/15 2 * * *` as an interval job (skip the whole
 * gap, run the repeated hour twice). Such a job is compiled with its minute field spelled out as
 * a list (`0,15,30,45 2 * * *`), which croner then treats as fixed-time.
 */
import { Cron } from 'croner';
import { toError } from '../errors/to-error.js';

const ALIASES: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

const FIELDS = 'minute hour day-of-month month day-of-week';
const INTERVAL_MARK = /[*?/]/;

export function isValidTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The minutes a minute field matches, as an explicit list ("*\/20" -> "0,20,40"). */
function explicitMinutes(field: string): string {
  const matcher = new Cron(`${field} * * * *`, { paused: true, mode: '5-part', timezone: 'UTC' });
  const hour = Date.UTC(2000, 0, 1);
  const minutes: number[] = [];
  for (let m = 0; m < 60; m += 1) if (matcher.match(new Date(hour + m * 60_000))) minutes.push(m);
  return minutes.join(',');
}

/** Compiled instances by zone and expression: a minute-ticking scheduler asks about the same few entries all day. */
const compiled = new Map<string, Cron>();
const MAX_COMPILED = 2000;

/**
 * A paused croner instance for a canonical expression in `timezone` (absent: the process zone).
 * Throws on an invalid expression; a bad zone surfaces when run times are computed.
 */
export function compileCron(expression: string, timezone: string | undefined): Cron {
  const key = `${timezone ?? ''} ${expression}`;
  const cached = compiled.get(key);
  if (cached !== undefined) return cached;
  const [minute = '', hour = '', ...rest] = expression.split(' ');
  const pattern = !INTERVAL_MARK.test(hour) && INTERVAL_MARK.test(minute) ? [explicitMinutes(minute), hour, ...rest].join(' ') : expression;
  const cron = new Cron(pattern, { paused: true, mode: '5-part', fixedTimeRule: 'no-wildcard', ...(timezone !== undefined ? { timezone } : {}) });
  if (compiled.size >= MAX_COMPILED) compiled.clear();
  compiled.set(key, cron);
  return cron;
}

/**
 * Canonical five-field form of a cron string (aliases expanded, whitespace collapsed, an optional
 * `CRON_TZ=Zone` prefix split off), or the reason it is not one.
 */
export function canonicalCron(text: string): { expression: string; timezone?: string } | { error: string } {
  let rest = text.trim().replace(/\s+/g, ' ');
  let timezone: string | undefined;
  const tz = /^CRON_TZ=(\S*)(?: (.*))?$/.exec(rest);
  if (tz !== null) {
    timezone = tz[1] ?? '';
    rest = tz[2] ?? '';
    if (!isValidTimeZone(timezone) || timezone === '') return { error: `unknown time zone "${timezone}" in CRON_TZ` };
  }
  if (rest === '') return { error: 'empty cron expression' };
  const expression = ALIASES[rest.toLowerCase()] ?? rest;
  if (expression.startsWith('@')) return { error: `unknown schedule alias "${rest}"` };
  const fields = expression.split(' ');
  if (fields.length !== 5) {
    return { error: `invalid cron expression "${rest}" (expected 5 fields: ${FIELDS}, got ${fields.length})` };
  }
  try {
    // UTC keeps the check independent of the machine's zone; DST cannot make a pattern empty.
    if (compileCron(expression, 'UTC').nextRun() === null) return { error: `invalid cron expression "${rest}" (it never matches a date)` };
  } catch (error) {
    return { error: `invalid cron expression "${rest}" (${toError(error).message})` };
  }
  return timezone !== undefined ? { expression, timezone } : { expression };
}
