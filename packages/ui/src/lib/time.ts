/*
 * Times are formatted by hand, in English like the rest of the UI, rather than with Intl: the
 * first Intl object a page makes loads ICU's locale data, which held a cold page's main thread
 * for 20 to 100 ms just as its code and data arrived. For the same reason the page names the
 * user's zone by its offset from UTC, not by its IANA name.
 */

const UNITS: Array<[string, number]> = [
  ['year', 365 * 86400],
  ['month', 30 * 86400],
  ['day', 86400],
  ['hour', 3600],
  ['minute', 60],
  ['second', 1],
];

/** `in 5 minutes`, `3 hours ago`, `yesterday`, `now`. */
export function relativeTime(date: Date, now = Date.now()): string {
  const seconds = Math.round((date.getTime() - now) / 1000);
  if (Math.abs(seconds) < 1) return 'now';
  // A second or more: some unit always fits, the last one at least.
  const [unit, size] = UNITS.find(([, s]) => Math.abs(seconds) >= s) ?? ['second', 1];
  const count = Math.round(seconds / size);
  if (unit === 'day' && Math.abs(count) === 1) return count < 0 ? 'yesterday' : 'tomorrow';
  const amount = `${Math.abs(count)} ${unit}${Math.abs(count) === 1 ? '' : 's'}`;
  return count < 0 ? `${amount} ago` : `in ${amount}`;
}

const two = (n: number): string => String(n).padStart(2, '0');

/** `2026-11-26 19:40:05`, in the user's own time zone. */
export function absoluteTime(date: Date): string {
  return `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())} ${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}`;
}

/** The user's offset from UTC at `date` (now by default): `UTC+01:00`. */
export function utcOffset(date = new Date()): string {
  const minutes = -date.getTimezoneOffset();
  const sign = minutes < 0 ? '-' : '+';
  return `UTC${sign}${two(Math.floor(Math.abs(minutes) / 60))}:${two(Math.abs(minutes) % 60)}`;
}

/** A contract timestamp ('' when unset) as a Date. */
export function parseTime(value: string | undefined): Date | undefined {
  if (value === undefined || value === '') return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) || date.getTime() <= 0 ? undefined : date;
}

/** `1m 05s`, `320 ms`. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m`;
}
