import { z } from 'zod';
import type { AtScheduleEntry, CronScheduleEntry, ScheduleEntry, ScheduleSet } from '../model/dag.js';
import { Issues, describeType } from '../spec/issues.js';
import { canonicalCron } from './cron.js';

/** The contract's profile name rule: a lowercase slug. */
const profileSchema = z.string().regex(/^[a-z0-9][a-z0-9._-]*$/, 'must be a profile name (lowercase letters, digits, ".", "_", "-")');

const atSchema = z.strictObject({
  kind: z.literal('at').optional(),
  at: z.union([z.string(), z.date()], { error: 'must be an RFC 3339 timestamp' }),
  profile: profileSchema.optional(),
});

const cronObjectSchema = z.strictObject({
  kind: z.literal('cron').optional(),
  expression: z.string({ error: 'must be a cron string' }).optional(),
  cron: z.string({ error: 'must be a cron string' }).optional(),
  profile: profileSchema.optional(),
});

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})$/;

/**
 * An RFC 3339 timestamp with an explicit offset or Z, normalised to ISO UTC. Date.parse alone
 * would roll impossible dates over (Feb 30 -> Mar 2), so every field is range-checked first.
 */
function parseAt(text: string): string | undefined {
  const m = RFC3339.exec(text.trim());
  if (m === null) return undefined;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6] ?? '0'].map(Number) as [number, number, number, number, number, number];
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth || hour > 23 || minute > 59 || second > 59) return undefined;
  const offset = (m[8] ?? 'Z').toUpperCase();
  const normalisedOffset = offset === 'Z' ? 'Z' : `${offset.slice(0, 3)}:${offset.slice(-2)}`;
  const iso = `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6] ?? '00'}${m[7] ?? ''}${normalisedOffset}`;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Date);
}

function parseAtEntry(raw: Record<string, unknown>, path: string, issues: Issues): AtScheduleEntry | undefined {
  const value = issues.check(atSchema, raw, path);
  if (value === undefined) return undefined;
  const at = value.at instanceof Date ? (Number.isNaN(value.at.getTime()) ? undefined : value.at.toISOString()) : parseAt(value.at);
  if (at === undefined) {
    issues.add(`${path}.at`, `must be an RFC 3339 timestamp with an offset or Z, got ${JSON.stringify(String(value.at))}`);
    return undefined;
  }
  const entry: AtScheduleEntry = { kind: 'at', at };
  if (value.profile !== undefined) entry.profile = value.profile;
  return entry;
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

function parseEntry(raw: unknown, path: string, issues: Issues): ScheduleEntry | undefined {
  if (typeof raw === 'string') return parseCronText(raw, undefined, path, issues);
  if (!isRecord(raw)) {
    issues.add(path, `must be a cron string or a schedule entry, got ${describeType(raw)}`);
    return undefined;
  }
  if (raw.kind === 'at' || (raw.kind === undefined && 'at' in raw)) return parseAtEntry(raw, path, issues);
  if (raw.kind !== undefined && raw.kind !== 'cron') {
    issues.add(`${path}.kind`, `must be "at" or "cron", got ${JSON.stringify(raw.kind)}`);
    return undefined;
  }
  const value = issues.check(cronObjectSchema, raw, path);
  if (value === undefined) return undefined;
  if (value.expression !== undefined && value.cron !== undefined) {
    issues.add(path, 'has both `expression` and `cron`; use one');
    return undefined;
  }
  const text = value.expression ?? value.cron;
  if (text === undefined) {
    issues.add(path, 'needs `expression` (a cron string) or `kind: at` with `at`');
    return undefined;
  }
  return parseCronText(text, value.profile, path, issues);
}

function parseList(raw: unknown, path: string, issues: Issues): ScheduleEntry[] {
  if (raw === undefined || raw === null) return [];
  const items = Array.isArray(raw) ? (raw as unknown[]) : [raw];
  const out: ScheduleEntry[] = [];
  items.forEach((item, i) => {
    const entry = parseEntry(item, Array.isArray(raw) ? `${path}[${i}]` : path, issues);
    if (entry !== undefined) out.push(entry);
  });
  return out;
}

const SET_KEYS = ['start', 'stop', 'restart'] as const;

/**
 * `schedule:` as a cron string, an array of strings and entry objects, or an object with
 * start/stop/restart lists. Every problem is returned as a `path: message` string; never throws.
 */
export function parseScheduleField(raw: unknown, path: string): { value: ScheduleSet; errors: string[] } {
  const issues = new Issues();
  const value: ScheduleSet = { start: [], stop: [], restart: [] };
  const isSet = isRecord(raw) && Object.keys(raw).some((k) => (SET_KEYS as readonly string[]).includes(k));
  if (isSet) {
    for (const key of Object.keys(raw)) {
      if (!(SET_KEYS as readonly string[]).includes(key)) issues.add(`${path}.${key}`, 'unknown field (expected start, stop or restart)');
    }
    for (const key of SET_KEYS) value[key] = parseList(raw[key], `${path}.${key}`, issues);
  } else {
    value.start = parseList(raw, path, issues);
  }
  return { value, errors: issues.list };
}
