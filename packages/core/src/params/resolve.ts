/**
 * Resolves the `params` of a start request against a DAG's declarations.
 *
 * Input (the request's JSON string): an object of named values; an array of positional/mixed
 * values (`"KEY=value"` strings and single-key maps are named, other scalars positional); or, for
 * CLI users, shell-style text (`KEY=v "other word"`), which is also how a JSON string or a bare
 * JSON number/boolean is read. A `null` value means "not supplied".
 *
 * Rules: values are coerced to the declared type (`"42"` is a fine integer, `"4.2"` is not) and
 * checked against enum, pattern and bounds. In a typed spec a blank string counts as not supplied
 * (a form field left empty), so a required param needs a non-blank value; in a legacy spec `KEY=`
 * sets an empty value, as in a shell. Unsupplied params
 * take their `eval` template when they have one (marked `evaluate` for the engine: it wins over a
 * literal `default`, which exists for display), else their literal default. Typed specs reject
 * unknown names and extra positional values (unless the JSON Schema allows additional
 * properties); legacy specs accept them, appended after the declared params, as shell users expect,
 * except reserved names (PATH, DAG_*, ...: see reserved.ts).
 */
import type { ParamDef, ParamSpec, ResolvedParams } from '../model/dag.js';
import { PARAM_NAME, checkValue, type ParamValue } from './constraints.js';
import { isReservedParamName } from './reserved.js';
import { splitShellWords } from './shell-words.js';

export type ResolveParamsResult = { ok: true; params: ResolvedParams } | { ok: false; errors: string[] };

interface Input {
  named: Map<string, ParamValue>;
  positional: ParamValue[];
}

function isScalar(value: unknown): value is ParamValue {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

function addWord(word: string, input: Input): void {
  const eq = word.indexOf('=');
  if (eq > 0 && PARAM_NAME.test(word.slice(0, eq))) input.named.set(word.slice(0, eq), word.slice(eq + 1));
  else input.positional.push(word);
}

function fromShellText(text: string, input: Input, errors: string[]): void {
  const words = splitShellWords(text);
  if (words === undefined) errors.push('params: has an unterminated quote');
  else for (const word of words) addWord(word, input);
}

function fromArray(items: unknown[], input: Input, errors: string[]): void {
  items.forEach((item, i) => {
    if (typeof item === 'string') addWord(item, input);
    else if (isScalar(item)) input.positional.push(item);
    else if (item !== null && typeof item === 'object' && !Array.isArray(item) && Object.keys(item).length === 1) {
      const [name, value] = Object.entries(item as Record<string, unknown>)[0] ?? ['', undefined];
      if (isScalar(value)) input.named.set(name, value);
      else if (value !== null) errors.push(`params[${i}].${name}: must be a string, number or boolean`);
    } else if (item !== null) errors.push(`params[${i}]: must be a string, number, boolean or a single NAME: value map`);
  });
}

function readInput(paramsJson: string | undefined, errors: string[]): Input {
  const input: Input = { named: new Map(), positional: [] };
  if (paramsJson === undefined || paramsJson.trim() === '') return input;
  let parsed: unknown;
  try {
    parsed = JSON.parse(paramsJson);
  } catch {
    fromShellText(paramsJson, input, errors);
    return input;
  }
  if (Array.isArray(parsed)) fromArray(parsed, input, errors);
  else if (typeof parsed === 'string') fromShellText(parsed, input, errors);
  else if (typeof parsed === 'number' || typeof parsed === 'boolean') fromShellText(paramsJson, input, errors);
  else if (parsed !== null && typeof parsed === 'object') {
    for (const [name, value] of Object.entries(parsed)) {
      if (isScalar(value)) input.named.set(name, value);
      else if (value !== null) errors.push(`params.${name}: must be a string, number or boolean`);
    }
  }
  return input;
}

function show(value: ParamValue): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

const INTEGER = /^[+-]?\d+$/;
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/** Coerces a supplied value to the param's type; decimal notation only (no hex, no Infinity). */
function coerce(def: ParamDef, value: ParamValue): { value: ParamValue } | { error: string } {
  const text = typeof value === 'string' ? value.trim() : undefined;
  switch (def.type) {
    case 'string':
      return { value: String(value) };
    case 'integer': {
      const n = text !== undefined && INTEGER.test(text) ? Number(text) : value;
      if (typeof n === 'number' && Number.isSafeInteger(n)) return { value: n };
      if (typeof n === 'number' && Number.isInteger(n)) return { error: `must be an integer between ${Number.MIN_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER}, got ${show(value)}` };
      return { error: `must be an integer, got ${show(value)}` };
    }
    case 'number': {
      const n = text !== undefined && DECIMAL.test(text) ? Number(text) : value;
      if (typeof n === 'number' && Number.isFinite(n)) return { value: n };
      return { error: `must be a number, got ${show(value)}` };
    }
    case 'boolean': {
      if (typeof value === 'boolean') return { value };
      if (text !== undefined && /^(true|false)$/i.test(text)) return { value: text.toLowerCase() === 'true' };
      return { error: `must be a boolean (true or false), got ${show(value)}` };
    }
  }
}

function resolveDef(def: ParamDef, supplied: ParamValue | undefined, typed: boolean, errors: string[]): ResolvedParams[number] | undefined {
  const where = `params.${def.name}`;
  if (supplied !== undefined && !(typed && typeof supplied === 'string' && supplied.trim() === '')) {
    const coerced = coerce(def, supplied);
    if ('error' in coerced) {
      errors.push(`${where}: ${coerced.error}`);
      return undefined;
    }
    const problem = checkValue(def, coerced.value);
    if (problem !== undefined) {
      errors.push(`${where}: ${problem}, got ${show(supplied)}`);
      return undefined;
    }
    return { name: def.name, value: String(coerced.value) };
  }
  if (def.eval !== undefined) return { name: def.name, value: def.eval, evaluate: true };
  const fallback = def.default === undefined ? '' : String(def.default);
  if (def.required === true && fallback === '') {
    errors.push(`${where}: is required`);
    return undefined;
  }
  return { name: def.name, value: fallback };
}

/** Validates and coerces a start request's params; values come out as strings in declaration order, then extras. */
export function resolveStartParams(spec: ParamSpec, paramsJson: string | undefined): ResolveParamsResult {
  const errors: string[] = [];
  const input = readInput(paramsJson, errors);
  const byName = new Map(spec.defs.map((d) => [d.name, d]));
  const positionalDefs = spec.defs.filter((d) => d.position !== undefined).sort((a, b) => (a.position ?? 0) - (b.position ?? 0));
  const strict = spec.typed === true && spec.schema?.additionalProperties !== true;
  const supplied = new Map<string, ParamValue>();
  const extras: ResolvedParams = [];

  input.positional.forEach((value, i) => {
    const def = positionalDefs[i];
    if (def !== undefined) supplied.set(def.name, value);
    else if (strict) errors.push(`params[${i}]: unexpected positional value ${show(value)} (this DAG takes ${positionalDefs.length === 0 ? 'only named params' : `${positionalDefs.length} positional`})`);
    else extras.push({ name: String(i + 1), value: String(value) });
  });
  for (const [name, value] of input.named) {
    if (byName.has(name)) supplied.set(name, value);
    else if (strict) errors.push(`params.${name}: unknown parameter (declared: ${[...byName.keys()].join(', ') || 'none'})`);
    else if (!PARAM_NAME.test(name)) errors.push(`params.${name}: is not a valid parameter name`);
    else if (isReservedParamName(name)) errors.push(`params.${name}: is a reserved variable name; only a param the DAG declares may set it`);
    else extras.push({ name, value: String(value) });
  }

  const params: ResolvedParams = [];
  for (const def of spec.defs) {
    const resolved = resolveDef(def, supplied.get(def.name), spec.typed === true, errors);
    if (resolved !== undefined) params.push(resolved);
  }
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, params: [...params, ...extras] };
}
