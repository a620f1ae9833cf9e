import type { ParamDef, ParamSpec, ResolvedParams } from '../model/dag.js';
import { checkValue } from './parse.js';
import { splitShellWords } from './shell-words.js';

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

type Supplied = string | number | boolean;

interface Input {
  named: Map<string, Supplied>;
  positional: Supplied[];
}

export type ResolveParamsResult = { ok: true; params: ResolvedParams } | { ok: false; errors: string[] };

function addWord(word: string, input: Input): void {
  const eq = word.indexOf('=');
  if (eq > 0 && NAME.test(word.slice(0, eq))) input.named.set(word.slice(0, eq), word.slice(eq + 1));
  else input.positional.push(word);
}

function fromShellText(text: string, input: Input, errors: string[]): void {
  const words = splitShellWords(text);
  if (words === undefined) errors.push('params: has an unterminated quote');
  else for (const word of words) addWord(word, input);
}

function isScalar(value: unknown): value is Supplied {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

/** A start request's `params`: a JSON object (named), a JSON array (positional/mixed), or shell-style text. */
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
  if (typeof parsed === 'string') {
    fromShellText(parsed, input, errors);
  } else if (Array.isArray(parsed)) {
    parsed.forEach((item, i) => {
      if (typeof item === 'string') addWord(item, input);
      else if (isScalar(item)) input.positional.push(item);
      else if (item !== null) errors.push(`params[${i}]: must be a string, number or boolean`);
    });
  } else if (parsed !== null && typeof parsed === 'object') {
    for (const [name, value] of Object.entries(parsed as Record<string, unknown>)) {
      if (isScalar(value)) input.named.set(name, value);
      else if (value !== null) errors.push(`params.${name}: must be a string, number or boolean`);
    }
  } else if (parsed !== null) {
    errors.push('params: must be a JSON object of named values or an array of positional values');
  }
  return input;
}

function show(value: Supplied): string {
  return typeof value === 'string' ? `"${value}"` : String(value);
}

/** Coerces a supplied value to the param's type: `"42"` is a fine integer, `"4.2"` is not. */
function coerce(def: ParamDef, value: Supplied): { value: string | number | boolean } | { error: string } {
  switch (def.type) {
    case 'string':
      return { value: String(value) };
    case 'integer': {
      if (typeof value === 'number' && Number.isInteger(value)) return { value };
      if (typeof value === 'string' && /^[+-]?\d+$/.test(value.trim())) return { value: Number(value.trim()) };
      return { error: `must be an integer, got ${show(value)}` };
    }
    case 'number': {
      if (typeof value === 'number' && Number.isFinite(value)) return { value };
      if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return { value: Number(value) };
      return { error: `must be a number, got ${show(value)}` };
    }
    case 'boolean': {
      if (typeof value === 'boolean') return { value };
      if (typeof value === 'string' && /^(true|false)$/i.test(value.trim())) return { value: value.trim().toLowerCase() === 'true' };
      return { error: `must be a boolean (true or false), got ${show(value)}` };
    }
  }
}

function resolveDef(def: ParamDef, supplied: Supplied | undefined, errors: string[]): ResolvedParams[number] | undefined {
  const where = `params.${def.name}`;
  if (supplied !== undefined) {
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
  if (def.default !== undefined) return { name: def.name, value: String(def.default) };
  if (def.eval !== undefined) return { name: def.name, value: def.eval, evaluate: true };
  if (def.required === true) {
    errors.push(`${where}: is required`);
    return undefined;
  }
  return { name: def.name, value: '' };
}

/**
 * Validates and coerces the params of a start request against the DAG's definitions. Declared
 * params come first in declaration order; for untyped (legacy) params, extra names and extra
 * positional values are accepted and appended, as shell users expect.
 */
export function resolveStartParams(spec: ParamSpec, paramsJson: string | undefined): ResolveParamsResult {
  const errors: string[] = [];
  const input = readInput(paramsJson, errors);
  const byName = new Map(spec.defs.map((d) => [d.name, d]));
  const positionalDefs = spec.defs.filter((d) => d.position !== undefined).sort((a, b) => (a.position ?? 0) - (b.position ?? 0));
  const supplied = new Map<string, Supplied>();
  const extras: ResolvedParams = [];

  input.positional.forEach((value, i) => {
    const def = positionalDefs[i];
    if (def !== undefined) supplied.set(def.name, value);
    else if (spec.typed === true) errors.push(`params[${i}]: unexpected positional value ${show(value)} (this DAG takes ${positionalDefs.length})`);
    else extras.push({ name: String(i + 1), value: String(value) });
  });
  for (const [name, value] of input.named) {
    if (byName.has(name)) supplied.set(name, value);
    else if (spec.typed === true) errors.push(`params.${name}: unknown parameter (declared: ${[...byName.keys()].join(', ') || 'none'})`);
    else extras.push({ name, value: String(value) });
  }

  const params: ResolvedParams = [];
  for (const def of spec.defs) {
    const resolved = resolveDef(def, supplied.get(def.name), errors);
    if (resolved !== undefined) params.push(resolved);
  }
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, params: [...params, ...extras] };
}
