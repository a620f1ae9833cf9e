import { z } from 'zod';
import type { ParamDef, ParamSchema } from '../model/dag.js';
import type { Issues } from '../spec/issues.js';
import { PARAM_NAME, checkDefinition, inferType } from './constraints.js';

const scalar = z.union([z.string(), z.number(), z.boolean()]);
const paramType = z.enum(['string', 'integer', 'number', 'boolean'], { error: 'must be string, integer, number or boolean' });

/** The JSON Schema keywords a param can honour; anything else is rejected rather than silently unenforced. */
const propertySchema = z.strictObject({
  type: paramType.optional(),
  title: z.string().optional(),
  description: z.string().optional(),
  default: scalar.optional(),
  enum: z.array(scalar).min(1, 'must list at least one value').optional(),
  pattern: z.string().optional(),
  minimum: z.number().optional(),
  maximum: z.number().optional(),
});

const objectSchema = z.strictObject({
  $schema: z.string().optional(),
  title: z.string().optional(),
  description: z.string().optional(),
  type: z.literal('object'),
  properties: z.record(z.string(), propertySchema),
  required: z.array(z.string()).optional(),
  additionalProperties: z.boolean().optional(),
});

export function isJsonSchemaShaped(raw: Record<string, unknown>): boolean {
  return raw.type === 'object' && typeof raw.properties === 'object' && raw.properties !== null && !Array.isArray(raw.properties);
}

/** Definitions from an inline JSON Schema, in property order; `additionalProperties` when declared. */
export function defsFromJsonSchema(raw: Record<string, unknown>, path: string, issues: Issues): { defs: ParamDef[]; additionalProperties?: boolean } {
  const badNames = Object.keys(raw.properties ?? {}).filter((name) => !PARAM_NAME.test(name));
  for (const name of badNames) issues.add(`${path}.properties.${name}`, 'must be a valid identifier (letters, digits, _; not starting with a digit)');
  const schema = issues.check(objectSchema, raw, path);
  if (schema === undefined) return { defs: [] };
  const required = new Set(schema.required ?? []);
  schema.required?.forEach((name, i) => {
    if (!Object.hasOwn(schema.properties, name)) issues.add(`${path}.required[${i}]`, `"${name}" is not a declared property`);
  });
  const defs: ParamDef[] = [];
  for (const [name, prop] of Object.entries(schema.properties)) {
    if (badNames.includes(name)) continue;
    const def: ParamDef = { name, type: prop.type ?? inferType(prop.default, prop.enum) };
    const description = prop.description ?? prop.title;
    if (description !== undefined) def.description = description;
    if (prop.default !== undefined) def.default = prop.default;
    if (prop.enum !== undefined) def.enum = prop.enum;
    if (prop.pattern !== undefined) def.pattern = prop.pattern;
    if (prop.minimum !== undefined) def.minimum = prop.minimum;
    if (prop.maximum !== undefined) def.maximum = prop.maximum;
    if (required.has(name)) def.required = true;
    checkDefinition(def, `${path}.properties.${name}`, issues);
    defs.push(def);
  }
  return schema.additionalProperties !== undefined ? { defs, additionalProperties: schema.additionalProperties } : { defs };
}

/**
 * The `paramSchema` a client may render as a form. Only params declared with types (rich
 * objects or an inline JSON Schema) qualify, and only when none is positional: a positional
 * param has no name a JSON object could carry, so a schema would hide it from the form, and a
 * client preferring `paramSchema` over `paramDefs` would then start runs without it. `eval`
 * templates never appear: a property shows only the authored literal default.
 */
export function renderSchema(defs: ParamDef[], additionalProperties: boolean | undefined): ParamSchema | undefined {
  if (defs.length === 0 || defs.some((d) => d.position !== undefined)) return undefined;
  const properties: ParamSchema['properties'] = {};
  const required: string[] = [];
  for (const def of defs) {
    const prop: Record<string, unknown> = { type: def.type };
    if (def.description !== undefined) prop.description = def.description;
    if (def.default !== undefined) prop.default = def.default;
    if (def.enum !== undefined) prop.enum = [...def.enum];
    if (def.pattern !== undefined) prop.pattern = def.pattern;
    if (def.minimum !== undefined) prop.minimum = def.minimum;
    if (def.maximum !== undefined) prop.maximum = def.maximum;
    properties[def.name] = prop;
    if (def.required === true) required.push(def.name);
  }
  const schema: ParamSchema = { type: 'object', properties };
  if (required.length > 0) schema.required = required;
  if (additionalProperties !== undefined) schema.additionalProperties = additionalProperties;
  return schema;
}
