import type { ParamDef, ParamType } from '../model/dag.js';
import type { Issues } from '../spec/issues.js';

export type ParamValue = string | number | boolean;

export const PARAM_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function matchesType(type: ParamType, value: ParamValue): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'integer':
      return typeof value === 'number' && Number.isSafeInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
  }
}

function compile(pattern: string): RegExp | undefined {
  try {
    return new RegExp(pattern, 'u');
  } catch {
    return undefined;
  }
}

/** Whether a value of the param's type satisfies its pattern and bounds; the problem, or undefined. */
function checkBounds(def: ParamDef, value: ParamValue): string | undefined {
  if (!matchesType(def.type, value)) return `must be of type ${def.type}`;
  if (typeof value === 'string' && def.pattern !== undefined && compile(def.pattern)?.test(value) === false) return `must match the pattern ${def.pattern}`;
  if (typeof value === 'number') {
    if (def.minimum !== undefined && value < def.minimum) return `must be >= ${def.minimum}`;
    if (def.maximum !== undefined && value > def.maximum) return `must be <= ${def.maximum}`;
  }
  return undefined;
}

/** Whether a typed value satisfies a definition (type, enum, pattern, bounds); the problem, or undefined. */
export function checkValue(def: ParamDef, value: ParamValue): string | undefined {
  const problem = checkBounds(def, value);
  if (problem !== undefined) return problem;
  if (def.enum !== undefined && !def.enum.some((allowed) => allowed === value)) {
    return `must be one of ${def.enum.map((v) => JSON.stringify(v)).join(', ')}`;
  }
  return undefined;
}

/**
 * A declared param's own consistency: the pattern compiles (as a `u`-flag JavaScript regular
 * expression, the closest to JSON Schema's ECMA 262 dialect), bounds are ordered and only on
 * numbers, a pattern only on strings, every enum value and the default satisfy the rest.
 */
export function checkDefinition(def: ParamDef, path: string, issues: Issues): void {
  if (def.pattern !== undefined) {
    try {
      new RegExp(def.pattern, 'u');
    } catch (error) {
      issues.add(`${path}.pattern`, `is not a valid regular expression (${error instanceof Error ? error.message : String(error)})`);
    }
    if (def.type !== 'string') issues.add(path, 'pattern needs type string');
  }
  if (def.minimum !== undefined && def.maximum !== undefined && def.minimum > def.maximum) {
    issues.add(path, `minimum (${def.minimum}) is greater than maximum (${def.maximum})`);
  }
  if ((def.minimum !== undefined || def.maximum !== undefined) && def.type !== 'integer' && def.type !== 'number') {
    issues.add(path, 'minimum and maximum need type integer or number');
  }
  def.enum?.forEach((value, i) => {
    const problem = checkBounds(def, value);
    if (problem !== undefined) issues.add(`${path}.enum[${i}]`, problem);
  });
  if (def.default !== undefined) {
    const problem = checkValue(def, def.default);
    if (problem !== undefined) issues.add(`${path}.default`, problem);
  }
}

/** The type a declaration without `type` gets: that of its default, else of its first enum value, else string. */
export function inferType(value: unknown, enumValues?: unknown[]): ParamType {
  const sample = value ?? enumValues?.[0];
  if (typeof sample === 'boolean') return 'boolean';
  if (typeof sample === 'number') return Number.isInteger(sample) ? 'integer' : 'number';
  return 'string';
}
