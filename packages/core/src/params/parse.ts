/**
 * The `params:` field (Dagu-compatible forms):
 *  - a shell-style string `a "b c" KEY=value KEY2="x y"`: bare words are positional, KEY=value named;
 *  - an array of `KEY=value` strings (named), bare strings or scalars (positional), single-key
 *    maps `{KEY: default}` (named) and rich objects `{name, type, description, default, eval,
 *    enum, pattern, minimum, maximum, required}` (a map with a `name` key is always rich);
 *  - an inline JSON Schema object (`type: object` with `properties`, `required[]`);
 *  - any other object: a map NAME -> default.
 * Positional params are named "1", "2", ... in order and carry `position`. Legacy forms (no rich
 * object, no schema) are untyped strings; any rich object or a schema makes the spec `typed`.
 */
import { z } from 'zod';
import type { ParamDef, ParamSpec } from '../model/dag.js';
import { Issues, describeType } from '../spec/issues.js';
import { PARAM_NAME, checkDefinition, inferType } from './constraints.js';
import { defsFromJsonSchema, isJsonSchemaShaped, renderSchema } from './schema.js';
import { splitShellWords } from './shell-words.js';

const scalar = z.union([z.string(), z.number(), z.boolean()]);

const richParamSchema = z.strictObject({
  name: z.string().regex(PARAM_NAME, 'must be a valid identifier (letters, digits, _; not starting with a digit)'),
  type: z.enum(['string', 'integer', 'number', 'boolean'], { error: 'must be string, integer, number or boolean' }).optional(),
  description: z.string().optional(),
  default: scalar.optional(),
  eval: z.string().optional(),
  enum: z.array(scalar).min(1, 'must list at least one value').optional(),
  pattern: z.string().optional(),
  minimum: z.number().optional(),
  maximum: z.number().optional(),
  required: z.boolean().optional(),
});

class Collector {
  readonly defs: ParamDef[] = [];
  typed = false;

  constructor(readonly issues: Issues) {}

  positional(value: string): void {
    const position = this.defs.filter((d) => d.position !== undefined).length;
    this.defs.push({ name: String(position + 1), position, type: 'string', default: value });
  }

  /** A legacy `NAME: default` pair: an untyped string param. */
  named(name: string, value: unknown, path: string): void {
    if (!PARAM_NAME.test(name)) {
      this.issues.add(path, `"${name}" is not a valid parameter name (letters, digits, _; not starting with a digit)`);
      return;
    }
    if (value === null || value === undefined) {
      this.defs.push({ name, type: 'string', default: '' });
    } else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      this.defs.push({ name, type: 'string', default: String(value) });
    } else {
      this.issues.add(path, `default of "${name}" must be a scalar, got ${describeType(value)}`);
    }
  }

  /** A word of the shell-style form: `KEY=value` when KEY is a valid name, else positional. */
  word(word: string, path: string): void {
    const eq = word.indexOf('=');
    if (eq > 0 && PARAM_NAME.test(word.slice(0, eq))) this.named(word.slice(0, eq), word.slice(eq + 1), path);
    else this.positional(word);
  }
}

function fromRich(record: Record<string, unknown>, path: string, into: Collector): void {
  into.typed = true;
  const rich = into.issues.check(richParamSchema, record, path);
  if (rich === undefined) return;
  const def: ParamDef = { name: rich.name, type: rich.type ?? inferType(rich.default, rich.enum) };
  if (rich.description !== undefined) def.description = rich.description;
  if (rich.default !== undefined) def.default = rich.default;
  if (rich.eval !== undefined) def.eval = rich.eval;
  if (rich.enum !== undefined) def.enum = rich.enum;
  if (rich.pattern !== undefined) def.pattern = rich.pattern;
  if (rich.minimum !== undefined) def.minimum = rich.minimum;
  if (rich.maximum !== undefined) def.maximum = rich.maximum;
  if (rich.required !== undefined) def.required = rich.required;
  checkDefinition(def, path, into.issues);
  into.defs.push(def);
}

function fromArrayItem(item: unknown, path: string, into: Collector): void {
  if (typeof item === 'string') return into.word(item, path);
  if (typeof item === 'number' || typeof item === 'boolean') return into.positional(String(item));
  if (item === null || typeof item !== 'object' || Array.isArray(item)) {
    into.issues.add(path, `must be a string, a NAME: value map or a param object, got ${describeType(item)}`);
    return;
  }
  const record = item as Record<string, unknown>;
  if (Object.hasOwn(record, 'name')) return fromRich(record, path, into);
  const [key, ...others] = Object.keys(record);
  if (key === undefined || others.length > 0) {
    into.issues.add(path, 'a map item must have exactly one key (NAME: default), or a `name` field for a typed param');
    return;
  }
  into.named(key, record[key], path);
}

function reportDuplicates(defs: ParamDef[], path: string, issues: Issues): void {
  const seen = new Set<string>();
  for (const def of defs) {
    if (seen.has(def.name)) issues.add(path, `duplicate parameter "${def.name}"`);
    seen.add(def.name);
  }
}

/** `params:` in any of its forms; every problem as a `path: message` string, never an exception. */
export function parseParamsField(raw: unknown, path: string): { value: ParamSpec; errors: string[] } {
  const issues = new Issues();
  const into = new Collector(issues);
  let additionalProperties: boolean | undefined;
  if (typeof raw === 'string') {
    const words = splitShellWords(raw);
    if (words === undefined) issues.add(path, 'has an unterminated quote');
    else for (const word of words) into.word(word, path);
  } else if (Array.isArray(raw)) {
    raw.forEach((item, i) => fromArrayItem(item, `${path}[${i}]`, into));
  } else if (raw !== null && typeof raw === 'object' && isJsonSchemaShaped(raw as Record<string, unknown>)) {
    into.typed = true;
    const parsed = defsFromJsonSchema(raw as Record<string, unknown>, path, issues);
    into.defs.push(...parsed.defs);
    additionalProperties = parsed.additionalProperties;
  } else if (raw !== null && typeof raw === 'object') {
    for (const [name, value] of Object.entries(raw as Record<string, unknown>)) into.named(name, value, `${path}.${name}`);
  } else if (raw !== undefined && raw !== null) {
    issues.add(path, `must be a string, an array or a mapping, got ${describeType(raw)}`);
  }
  reportDuplicates(into.defs, path, issues);
  const defs = into.defs;
  const value: ParamSpec = { defs };
  if (into.typed) {
    value.typed = true;
    const schema = renderSchema(defs, additionalProperties);
    if (schema !== undefined) value.schema = schema;
  }
  return { value, errors: issues.list };
}
