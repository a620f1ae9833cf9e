import { z } from 'zod';
import type { ParamDef, ParamSchema, ParamSpec, ParamType } from '../model/dag.js';
import { Issues, describeType } from '../spec/issues.js';
import { splitShellWords } from './shell-words.js';

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const scalar = z.union([z.string(), z.number(), z.boolean()]);

const richParamSchema = z.strictObject({
  name: z.string().regex(NAME, 'must be a valid identifier (letters, digits, _; not starting with a digit)'),
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

const jsonSchemaProperty = z.strictObject({
  type: z.enum(['string', 'integer', 'number', 'boolean'], { error: 'must be string, integer, number or boolean' }).optional(),
  description: z.string().optional(),
  default: scalar.optional(),
  enum: z.array(scalar).min(1).optional(),
  pattern: z.string().optional(),
  minimum: z.number().optional(),
  maximum: z.number().optional(),
  title: z.string().optional(),
});

const jsonSchemaParams = z.strictObject({
  $schema: z.string().optional(),
  type: z.literal('object'),
  properties: z.record(z.string().regex(NAME, 'must be a valid identifier'), jsonSchemaProperty),
  required: z.array(z.string()).optional(),
  additionalProperties: z.boolean().optional(),
  title: z.string().optional(),
  description: z.string().optional(),
});

/** How the params were declared: only declared shapes render as a schema. */
type Origin = 'legacy' | 'rich' | 'schema';

function scalarToString(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function matchesType(type: ParamType, value: string | number | boolean): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
  }
}

/** Checks a declared param's own consistency: enum and default against type, pattern, bounds. */
function checkDef(def: ParamDef, path: string, issues: Issues): void {
  if (def.pattern !== undefined) {
    try {
      new RegExp(def.pattern);
    } catch (error) {
      issues.add(`${path}.pattern`, `is not a valid regular expression (${(error as Error).message})`);
    }
  }
  if (def.minimum !== undefined && def.maximum !== undefined && def.minimum > def.maximum) {
    issues.add(path, `minimum (${def.minimum}) is greater than maximum (${def.maximum})`);
  }
  if ((def.minimum !== undefined || def.maximum !== undefined) && def.type !== 'integer' && def.type !== 'number') {
    issues.add(path, 'minimum and maximum need type integer or number');
  }
  def.enum?.forEach((value, i) => {
    if (!matchesType(def.type, value)) issues.add(`${path}.enum[${i}]`, `must be of type ${def.type}`);
  });
  if (def.default !== undefined) {
    const problem = checkValue(def, def.default);
    if (problem !== undefined) issues.add(`${path}.default`, problem);
  }
}

/** Whether a typed value satisfies a definition; returns the problem or undefined. */
export function checkValue(def: ParamDef, value: string | number | boolean): string | undefined {
  if (!matchesType(def.type, value)) return `must be of type ${def.type}`;
  if (def.enum !== undefined && !def.enum.some((allowed) => allowed === value)) {
    return `must be one of ${def.enum.map((v) => JSON.stringify(v)).join(', ')}`;
  }
  if (typeof value === 'string' && def.pattern !== undefined) {
    let re: RegExp | undefined;
    try {
      re = new RegExp(def.pattern);
    } catch {
      re = undefined;
    }
    if (re !== undefined && !re.test(value)) return `must match the pattern ${def.pattern}`;
  }
  if (typeof value === 'number') {
    if (def.minimum !== undefined && value < def.minimum) return `must be >= ${def.minimum}`;
    if (def.maximum !== undefined && value > def.maximum) return `must be <= ${def.maximum}`;
  }
  return undefined;
}

function legacyNamed(name: string, value: unknown, path: string, issues: Issues): ParamDef | undefined {
  if (!NAME.test(name)) {
    issues.add(path, `"${name}" is not a valid parameter name`);
    return undefined;
  }
  if (value !== null && value !== undefined && typeof value === 'object') {
    issues.add(path, `default of "${name}" must be a scalar, got ${describeType(value)}`);
    return undefined;
  }
  return { name, type: 'string', default: value === null || value === undefined ? '' : scalarToString(value) };
}

function fromString(text: string, path: string, issues: Issues, defs: ParamDef[]): void {
  const words = splitShellWords(text);
  if (words === undefined) {
    issues.add(path, 'has an unterminated quote');
    return;
  }
  for (const word of words) addWord(word, path, issues, defs);
}

function addWord(word: string, path: string, issues: Issues, defs: ParamDef[]): void {
  const eq = word.indexOf('=');
  if (eq > 0 && NAME.test(word.slice(0, eq))) {
    const def = legacyNamed(word.slice(0, eq), word.slice(eq + 1), path, issues);
    if (def !== undefined) defs.push(def);
    return;
  }
  const position = defs.filter((d) => d.position !== undefined).length;
  defs.push({ name: String(position + 1), position, type: 'string', default: word });
}

function fromArrayItem(item: unknown, path: string, issues: Issues, defs: ParamDef[]): Origin {
  if (typeof item === 'string') {
    addWord(item, path, issues, defs);
    return 'legacy';
  }
  if (typeof item === 'number' || typeof item === 'boolean') {
    addWord(String(item), path, issues, defs);
    return 'legacy';
  }
  if (item !== null && typeof item === 'object' && !Array.isArray(item)) {
    const record = item as Record<string, unknown>;
    if ('name' in record) {
      const rich = issues.check(richParamSchema, record, path);
      if (rich === undefined) return 'rich';
      const def: ParamDef = { name: rich.name, type: rich.type ?? inferType(rich.default, rich.enum) };
      if (rich.description !== undefined) def.description = rich.description;
      if (rich.default !== undefined) def.default = rich.default;
      if (rich.eval !== undefined) def.eval = rich.eval;
      if (rich.enum !== undefined) def.enum = rich.enum;
      if (rich.pattern !== undefined) def.pattern = rich.pattern;
      if (rich.minimum !== undefined) def.minimum = rich.minimum;
      if (rich.maximum !== undefined) def.maximum = rich.maximum;
      if (rich.required !== undefined) def.required = rich.required;
      checkDef(def, path, issues);
      defs.push(def);
      return 'rich';
    }
    const keys = Object.keys(record);
    if (keys.length !== 1) {
      issues.add(path, 'a map item must have exactly one key (NAME: default), or a `name` field for a typed param');
      return 'legacy';
    }
    const key = keys[0] ?? '';
    const def = legacyNamed(key, record[key], path, issues);
    if (def !== undefined) defs.push(def);
    return 'legacy';
  }
  issues.add(path, `must be a string, a NAME: value map or a param object, got ${describeType(item)}`);
  return 'legacy';
}

function inferType(value: unknown, enumValues?: unknown[]): ParamType {
  const sample = value ?? enumValues?.[0];
  if (typeof sample === 'boolean') return 'boolean';
  if (typeof sample === 'number') return Number.isInteger(sample) ? 'integer' : 'number';
  return 'string';
}

function fromJsonSchema(raw: unknown, path: string, issues: Issues, defs: ParamDef[]): void {
  const schema = issues.check(jsonSchemaParams, raw, path);
  if (schema === undefined) return;
  const required = new Set(schema.required ?? []);
  for (const name of required) {
    if (!(name in schema.properties)) issues.add(`${path}.required`, `"${name}" is not a declared property`);
  }
  for (const [name, prop] of Object.entries(schema.properties)) {
    const def: ParamDef = { name, type: prop.type ?? inferType(prop.default, prop.enum) };
    const description = prop.description ?? prop.title;
    if (description !== undefined) def.description = description;
    if (prop.default !== undefined) def.default = prop.default;
    if (prop.enum !== undefined) def.enum = prop.enum;
    if (prop.pattern !== undefined) def.pattern = prop.pattern;
    if (prop.minimum !== undefined) def.minimum = prop.minimum;
    if (prop.maximum !== undefined) def.maximum = prop.maximum;
    if (required.has(name)) def.required = true;
    checkDef(def, `${path}.properties.${name}`, issues);
    defs.push(def);
  }
}

function isJsonSchemaShaped(raw: Record<string, unknown>): boolean {
  return raw.type === 'object' && typeof raw.properties === 'object' && raw.properties !== null;
}

/**
 * The schema form is offered to clients only for params declared with types (rich params or
 * an inline JSON Schema) and without positional ones: a positional or untyped legacy param has
 * no faithful JSON-Schema property, and a partial schema would hide it from the form.
 */
function renderSchema(defs: ParamDef[], origin: Origin): ParamSchema | undefined {
  if (origin === 'legacy' || defs.length === 0 || defs.some((d) => d.position !== undefined)) return undefined;
  const properties: ParamSchema['properties'] = {};
  const required: string[] = [];
  for (const def of defs) {
    const prop: Record<string, unknown> = { type: def.type };
    if (def.description !== undefined) prop.description = def.description;
    if (def.default !== undefined) prop.default = def.default;
    if (def.enum !== undefined) prop.enum = def.enum;
    if (def.pattern !== undefined) prop.pattern = def.pattern;
    if (def.minimum !== undefined) prop.minimum = def.minimum;
    if (def.maximum !== undefined) prop.maximum = def.maximum;
    properties[def.name] = prop;
    if (def.required === true) required.push(def.name);
  }
  const schema: ParamSchema = { type: 'object', properties };
  if (required.length > 0) schema.required = required;
  return schema;
}

/** `params:` in any of its forms: string, array of strings/maps/param objects, NAME map, or inline JSON Schema. */
export function parseParamsField(raw: unknown, path: string): { value: ParamSpec; errors: string[] } {
  const issues = new Issues();
  const defs: ParamDef[] = [];
  let origin: Origin = 'legacy';
  if (raw === undefined || raw === null) return { value: { defs }, errors: [] };
  if (typeof raw === 'string') {
    fromString(raw, path, issues, defs);
  } else if (Array.isArray(raw)) {
    let sawRich = false;
    raw.forEach((item, i) => {
      if (fromArrayItem(item, `${path}[${i}]`, issues, defs) === 'rich') sawRich = true;
    });
    origin = sawRich ? 'rich' : 'legacy';
  } else if (typeof raw === 'object' && isJsonSchemaShaped(raw as Record<string, unknown>)) {
    fromJsonSchema(raw, path, issues, defs);
    origin = 'schema';
  } else if (typeof raw === 'object') {
    for (const [name, value] of Object.entries(raw as Record<string, unknown>)) {
      const def = legacyNamed(name, value, `${path}.${name}`, issues);
      if (def !== undefined) defs.push(def);
    }
  } else {
    issues.add(path, `must be a string, an array or a mapping, got ${describeType(raw)}`);
  }
  const seen = new Set<string>();
  for (const def of defs) {
    if (seen.has(def.name)) issues.add(path, `duplicate parameter "${def.name}"`);
    seen.add(def.name);
  }
  const schema = renderSchema(defs, origin);
  const value: ParamSpec = { defs };
  if (schema !== undefined) value.schema = schema;
  if (origin !== 'legacy') value.typed = true;
  return { value, errors: issues.list };
}
