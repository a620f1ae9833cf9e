import type { ParamDef, ParamSpec } from '../model/dag.js';
import { quoteShellValue } from './shell-words.js';

/** The contract's paramDefs[] entry. */
export interface ParamDefPayload {
  name: string;
  type: string;
  description?: string;
  default?: string | number | boolean;
  enum?: Array<string | number | boolean>;
  pattern?: string;
  minimum?: number;
  maximum?: number;
}

export function paramNames(spec: ParamSpec): string[] {
  return spec.defs.map((d) => d.name);
}

function literalDefault(def: ParamDef): string {
  if (def.default === undefined) return '';
  return typeof def.default === 'string' ? def.default : String(def.default);
}

/**
 * The contract's `defaultParams`: `name="value"` pairs separated by single spaces, `"` and `\`
 * escaped; positional params as a bare `"value"` in their place. A param whose default is only an
 * `eval` template shows as `name=""`: templates are never evaluated for display (they may run
 * commands), and printing the template itself would be sent back verbatim as a literal value by
 * clients that start runs with this string.
 */
export function formatDefaultParams(spec: ParamSpec): string {
  return spec.defs
    .map((def) => (def.position !== undefined ? quoteShellValue(literalDefault(def)) : `${def.name}=${quoteShellValue(literalDefault(def))}`))
    .join(' ');
}

export function renderParamDefs(spec: ParamSpec): ParamDefPayload[] {
  return spec.defs.map((def) => {
    const out: ParamDefPayload = { name: def.name, type: def.type };
    if (def.description !== undefined) out.description = def.description;
    if (def.default !== undefined) out.default = def.default;
    if (def.enum !== undefined) out.enum = [...def.enum];
    if (def.pattern !== undefined) out.pattern = def.pattern;
    if (def.minimum !== undefined) out.minimum = def.minimum;
    if (def.maximum !== undefined) out.maximum = def.maximum;
    return out;
  });
}
