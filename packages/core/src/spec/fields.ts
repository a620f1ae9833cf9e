import { constants } from 'node:os';
import { z } from 'zod';
import type { ContinueOn, EnvEntry, Precondition, RepeatPolicy, RetryPolicy, StepOutput, WorkerSelector } from '../model/dag.js';
import type { Issues} from './issues.js';
import { describeType } from './issues.js';

/** Field schemas with the messages users read. */
export const str = z.string({ error: 'must be a string' });
export const bool = z.boolean({ error: 'must be true or false' });
export const nonNegInt = z.number({ error: 'must be a non-negative integer' }).int('must be a non-negative integer').min(0, 'must be a non-negative integer');
export const posInt = z.number({ error: 'must be a positive integer' }).int('must be a positive integer').min(1, 'must be a positive integer');
export const int = z.number({ error: 'must be an integer' }).int('must be an integer');
export const nonNegNumber = z.number({ error: 'must be a non-negative number' }).min(0, 'must be a non-negative number');
export const stringList = z.union([str, z.array(str)], { error: 'must be a string or a list of strings' }).transform((v) => (Array.isArray(v) ? v : [v]));
export const intList = z.union([int, z.array(int)], { error: 'must be an integer or a list of integers' }).transform((v) => (Array.isArray(v) ? v : [v]));
export const record = z.record(z.string(), z.unknown(), { error: 'must be a mapping' });

const ENV_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function scalarText(value: unknown): string | undefined {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

function envEntry(key: string, value: unknown, path: string, issues: Issues): EnvEntry | undefined {
  if (!ENV_KEY.test(key)) {
    issues.add(path, `"${key}" is not a valid environment variable name`);
    return undefined;
  }
  const text = scalarText(value);
  if (text === undefined) {
    issues.add(path, `value of ${key} must be a scalar, got ${describeType(value)}`);
    return undefined;
  }
  return { key, value: text };
}

/** `env:` as a mapping, a list of `KEY=value` strings, or a list of single-key mappings. */
export function parseEnv(raw: unknown, path: string, issues: Issues): EnvEntry[] {
  const out: EnvEntry[] = [];
  const push = (entry: EnvEntry | undefined): void => {
    if (entry !== undefined) out.push(entry);
  };
  if (raw === undefined || raw === null) return out;
  if (isRecord(raw)) {
    for (const [key, value] of Object.entries(raw)) push(envEntry(key, value, `${path}.${key}`, issues));
    return out;
  }
  if (!Array.isArray(raw)) {
    issues.add(path, `must be a mapping or a list, got ${describeType(raw)}`);
    return out;
  }
  raw.forEach((item, i) => {
    const at = `${path}[${i}]`;
    if (typeof item === 'string') {
      const eq = item.indexOf('=');
      if (eq <= 0) issues.add(at, `must be KEY=value, got "${item}"`);
      else push(envEntry(item.slice(0, eq), item.slice(eq + 1), at, issues));
    } else if (isRecord(item) && Object.keys(item).length === 1) {
      const [key, value] = Object.entries(item)[0] ?? ['', ''];
      push(envEntry(key, value, at, issues));
    } else {
      issues.add(at, `must be KEY=value or a single-key mapping, got ${describeType(item)}`);
    }
  });
  return out;
}

const preconditionObject = z.strictObject({
  condition: str.optional(),
  eval: str.optional(),
  expected: z.union([str, z.number(), z.boolean()], { error: 'must be a string' }).transform(String).optional(),
  negate: bool.optional(),
  error: str.optional(),
});

/** `preconditions:` as a string, an object, or a list of these. */
export function parsePreconditions(raw: unknown, path: string, issues: Issues): Precondition[] {
  if (raw === undefined || raw === null) return [];
  const items = Array.isArray(raw) ? raw : [raw];
  const out: Precondition[] = [];
  items.forEach((item, i) => {
    const at = Array.isArray(raw) ? `${path}[${i}]` : path;
    if (typeof item === 'string') {
      out.push({ condition: item, negate: false });
      return;
    }
    const value = issues.check(preconditionObject, item, at);
    if (value === undefined) return;
    const condition = value.condition ?? value.eval;
    if (condition === undefined) {
      issues.add(at, 'needs a `condition`');
      return;
    }
    const entry: Precondition = { condition, negate: value.negate ?? false };
    if (value.expected !== undefined) entry.expected = value.expected;
    if (value.error !== undefined) entry.error = value.error;
    out.push(entry);
  });
  return out;
}

const continueOnObject = z.strictObject({
  failure: bool.optional(),
  skipped: bool.optional(),
  exit_code: intList.optional(),
  output: stringList.optional(),
  mark_success: bool.optional(),
});

export const NO_CONTINUE: ContinueOn = { failure: false, skipped: false, exitCode: [], output: [], markSuccess: false };

export function parseContinueOn(raw: unknown, path: string, issues: Issues): ContinueOn {
  if (raw === undefined || raw === null) return { ...NO_CONTINUE };
  if (typeof raw === 'string') {
    if (raw === 'failure' || raw === 'failed') return { ...NO_CONTINUE, failure: true };
    if (raw === 'skipped') return { ...NO_CONTINUE, skipped: true };
    issues.add(path, `must be a mapping, or "failure" or "skipped", got "${raw}"`);
    return { ...NO_CONTINUE };
  }
  const value = issues.check(continueOnObject, raw, path);
  if (value === undefined) return { ...NO_CONTINUE };
  return {
    failure: value.failure ?? false,
    skipped: value.skipped ?? false,
    exitCode: value.exit_code ?? [],
    output: value.output ?? [],
    markSuccess: value.mark_success ?? false,
  };
}

const backoff = z
  .union([z.boolean(), z.number()], { error: 'must be true or a number greater than 1.0' })
  .refine((v) => typeof v === 'boolean' || v > 1, 'must be true or a number greater than 1.0')
  .transform((v) => (v === true ? 2 : v === false ? 1 : v));

const retryObject = z.strictObject({
  limit: nonNegInt,
  interval_sec: nonNegNumber.optional(),
  backoff: backoff.optional(),
  max_interval_sec: nonNegNumber.optional(),
  exit_code: intList.optional(),
});

export function parseRetryPolicy(raw: unknown, path: string, issues: Issues): RetryPolicy | undefined {
  if (raw === undefined || raw === null) return undefined;
  const value = issues.check(retryObject, raw, path);
  if (value === undefined) return undefined;
  const policy: RetryPolicy = { limit: value.limit, intervalSec: value.interval_sec ?? 0, backoff: value.backoff ?? 1, exitCode: value.exit_code ?? [] };
  if (value.max_interval_sec !== undefined) policy.maxIntervalSec = value.max_interval_sec;
  return policy;
}

const repeatObject = z.strictObject({
  repeat: z.union([z.literal('while'), z.literal('until'), z.literal(true)], { error: 'must be "while" or "until"' }).optional(),
  interval_sec: nonNegNumber.optional(),
  backoff: backoff.optional(),
  max_interval_sec: nonNegNumber.optional(),
  limit: posInt.optional(),
  condition: str.optional(),
  expected: z.union([str, z.number(), z.boolean()], { error: 'must be a string' }).transform(String).optional(),
  exit_code: intList.optional(),
});

/**
 * `repeat: true` is the legacy form: repeat unconditionally (until `limit` or a stop). Without
 * `repeat`, the mode follows from what is given: a condition with `expected` repeats until it
 * matches; a bare condition or exit codes repeat while they hold.
 */
export function parseRepeatPolicy(raw: unknown, path: string, issues: Issues): RepeatPolicy | undefined {
  if (raw === undefined || raw === null) return undefined;
  const value = issues.check(repeatObject, raw, path);
  if (value === undefined) return undefined;
  const hasTest = value.condition !== undefined || (value.exit_code?.length ?? 0) > 0;
  let mode: 'while' | 'until';
  if (value.repeat === 'while' || value.repeat === 'until') {
    mode = value.repeat;
    if (!hasTest) issues.add(path, `repeat: ${mode} needs a condition or exit_code`);
  } else if (value.repeat === true) {
    mode = 'while';
  } else if (hasTest) {
    mode = value.condition !== undefined && value.expected !== undefined ? 'until' : 'while';
  } else {
    issues.add(`${path}.repeat`, 'is required: "while" or "until" (with a condition or exit_code)');
    return undefined;
  }
  if (value.expected !== undefined && value.condition === undefined) issues.add(`${path}.expected`, 'needs a condition');
  const policy: RepeatPolicy = { mode, intervalSec: value.interval_sec ?? 0, backoff: value.backoff ?? 1, exitCode: value.exit_code ?? [] };
  if (value.max_interval_sec !== undefined) policy.maxIntervalSec = value.max_interval_sec;
  if (value.limit !== undefined) policy.limit = value.limit;
  if (value.condition !== undefined) policy.condition = value.condition;
  if (value.expected !== undefined) policy.expected = value.expected;
  return policy;
}

const outputObject = z.strictObject({
  name: z.string({ error: 'must be a string' }).regex(IDENTIFIER, 'must be a variable name (letters, digits, _; not starting with a digit)'),
  key: z.string({ error: 'must be a string' }).min(1, 'must not be empty').optional(),
  omit: bool.optional(),
});

export function parseOutput(raw: unknown, path: string, issues: Issues): StepOutput | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw === 'string') {
    const name = raw.startsWith('$') ? raw.slice(1) : raw;
    if (!IDENTIFIER.test(name)) {
      issues.add(path, `must be a variable name (letters, digits, _; not starting with a digit), got "${raw}"`);
      return undefined;
    }
    return { name, omit: false };
  }
  const value = issues.check(outputObject, raw, path);
  if (value === undefined) return undefined;
  const out: StepOutput = { name: value.name, omit: value.omit ?? false };
  if (value.key !== undefined) out.key = value.key;
  return out;
}

export function parseWorkerSelector(raw: unknown, path: string, issues: Issues): WorkerSelector | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (raw === 'local') return { kind: 'local' };
  if (!isRecord(raw)) {
    issues.add(path, `must be "local" or a mapping of label to value, got ${typeof raw === 'string' ? `"${raw}"` : describeType(raw)}`);
    return undefined;
  }
  const labels: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw)) {
    const text = scalarText(value);
    if (text === undefined || value === null) issues.add(`${path}.${key}`, 'must be a string value');
    else labels[key] = text;
  }
  return { kind: 'labels', labels };
}

const SIGNALS = new Set(Object.keys(constants.signals));

export function parseSignal(raw: unknown, path: string, issues: Issues): string | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw === 'string') {
    const name = raw.toUpperCase().startsWith('SIG') ? raw.toUpperCase() : `SIG${raw.toUpperCase()}`;
    if (SIGNALS.has(name)) return name;
  }
  issues.add(path, `must be a signal name such as SIGTERM or SIGINT, got ${typeof raw === 'string' ? `"${raw}"` : describeType(raw)}`);
  return undefined;
}

/** `shell:` as "bash -e" or ["bash", "-e"]. */
export function parseShell(raw: unknown, path: string, issues: Issues): string[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  const parts = typeof raw === 'string' ? raw.trim().split(/\s+/) : Array.isArray(raw) && raw.every((p) => typeof p === 'string') ? raw : undefined;
  if (parts === undefined || parts.length === 0 || parts[0] === '') {
    issues.add(path, 'must be a shell command such as "bash" or a list like ["bash", "-e"]');
    return undefined;
  }
  return parts;
}
