import type { z } from 'zod';

/**
 * Collects validation problems as human-readable strings naming the field path
 * (`steps[2].retry_policy.limit: must be a non-negative integer`). Validation reports every
 * problem at once, so nothing here throws. Warnings name settings that are valid but will not
 * do what they ask; they never make a definition invalid.
 */
export class Issues {
  readonly list: string[] = [];
  readonly warnings: string[] = [];

  add(path: string, message: string): void {
    this.list.push(path === '' ? message : `${path}: ${message}`);
  }

  warn(path: string, message: string): void {
    this.warnings.push(path === '' ? message : `${path}: ${message}`);
  }

  get count(): number {
    return this.list.length;
  }

  /** Validates `value` with a zod schema; records its issues under `path` and returns undefined on failure. */
  check<S extends z.ZodType>(schema: S, value: unknown, path: string): z.output<S> | undefined {
    const result = schema.safeParse(value);
    if (result.success) return result.data;
    for (const issue of result.error.issues) this.addZodIssue(path, issue, value);
    return undefined;
  }

  private addZodIssue(path: string, issue: z.core.$ZodIssue, input: unknown): void {
    const at = joinPath(path, issue.path);
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) this.add(joinPath(at, [key]), 'unknown field');
      return;
    }
    // A key that is absent reads better as "is required" than as the type it should have had.
    if (issue.code === 'invalid_type' && issue.path.length > 0 && valueAt(input, issue.path) === undefined) {
      this.add(at, 'is required');
      return;
    }
    this.add(at, issue.message);
  }
}

/** `steps[2]` + ['retry_policy', 'limit'] -> `steps[2].retry_policy.limit`; numbers become `[n]`. */
export function joinPath(base: string, segments: readonly PropertyKey[]): string {
  let out = base;
  for (const segment of segments) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += out === '' ? String(segment) : `.${String(segment)}`;
  }
  return out;
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let current = value;
  for (const segment of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[segment];
  }
  return current;
}

export function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'a mapping';
  return `a ${typeof value}`;
}
