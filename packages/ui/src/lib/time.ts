/**
 * The formatters, made on first use: making them loads locale data (tens of milliseconds on a
 * busy machine), which the app does while the first page's chunk and data are on their way
 * (prepareTimeFormats) rather than before it asks for them.
 */
let formats: { relative: Intl.RelativeTimeFormat; absolute: Intl.DateTimeFormat; zone: string } | undefined;

export function prepareTimeFormats(): NonNullable<typeof formats> {
  formats ??= {
    relative: new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' }),
    absolute: new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' }),
    zone: Intl.DateTimeFormat().resolvedOptions().timeZone,
  };
  return formats;
}
const UNITS: Array<[Intl.RelativeTimeFormatUnit, number]> = [
  ['year', 365 * 86400],
  ['month', 30 * 86400],
  ['day', 86400],
  ['hour', 3600],
  ['minute', 60],
  ['second', 1],
];

/** `in 5 minutes`, `3 hours ago`. */
export function relativeTime(date: Date, now = Date.now()): string {
  const seconds = Math.round((date.getTime() - now) / 1000);
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size || unit === 'second') return prepareTimeFormats().relative.format(Math.round(seconds / size), unit);
  }
  return '';
}

/** In the user's own time zone. */
export const absoluteTime = (date: Date): string => prepareTimeFormats().absolute.format(date);

export const userTimeZone = (): string => prepareTimeFormats().zone;

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
