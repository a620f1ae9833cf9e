/**
 * `${...}` references, expanded as a pure function (one pass: a substituted value is never
 * expanded again, so values cannot inject references).
 *  - `${NAME}`: the value of NAME. NAME is an identifier, or digits for positional params (`${1}`).
 *  - `${NAME.a.b[0]}` (also `${NAME.a.0}`): a path after the name. `expandVariables` reads it from
 *    NAME's value parsed as JSON (strings raw, other values as JSON). `expandReferences` hands the
 *    head and the path segments to a resolver the engine supplies, which is how step references
 *    resolve: `${step.stdout}`, `${step.stderr}`, `${step.exit_code}`, `${STEP.outputs.key}`.
 *  - A reference nothing resolves is left exactly as written, so the shell may still expand it;
 *    shell forms that are not references (`${VAR:-x}`, `${#VAR}`, `${ VAR }`, `$(cmd)`) pass through.
 *  - `$${` writes a literal `${` (read left to right: `$$${X}` is `$` then the escape, `$${X}`).
 *  - Bare `$NAME` is left for the shell, which expands it from the environment; with
 *    `{ bare: true }` (for values that never reach a shell) it is expanded too, and `$$` escapes it.
 */
import { readJsonPath } from './json-path.js';
import { MAX_EXPANDED_VALUE_LENGTH } from '../spec/limits.js';
import { BadRequestError } from '../errors/domain-errors.js';

export { readJsonPath };

/** An expansion would produce a value beyond MAX_EXPANDED_VALUE_LENGTH (a chain of values that each double the last). */
export class ExpansionLimitError extends BadRequestError {
  constructor(readonly length: number) {
    super(`expanding \${...} references would produce a value of more than ${MAX_EXPANDED_VALUE_LENGTH} characters (MAX_EXPANDED_VALUE_LENGTH)`);
  }
}

/**
 * Resolves a reference: `head` is the name before the first `.` or `[`, `path` the segments after
 * it, `offset` where the reference starts in the text.
 */
export type ReferenceResolver = (head: string, path: string[], offset: number) => string | undefined;

export interface ExpandOptions {
  /** Also expand bare `$NAME` (for values that never reach a shell). */
  bare?: boolean;
}

const HEAD = '[A-Za-z_][A-Za-z0-9_]*|\\d+';
const SEGMENT = String.raw`\.[\p{L}\p{N}_-]+|\[\d+\]`;
const REFERENCE = new RegExp(String.raw`\$\$\{|\$\{(${HEAD})((?:${SEGMENT})*)\}|(\$)?\$([A-Za-z_][A-Za-z0-9_]*)`, 'gu');
const SEGMENTS = new RegExp(String.raw`\.([\p{L}\p{N}_-]+)|\[(\d+)\]`, 'gu');

function splitPath(text: string): string[] {
  return [...text.matchAll(SEGMENTS)].map((m) => m[1] ?? m[2] ?? '');
}

function substitute(whole: string, resolve: ReferenceResolver, offset: number, options: ExpandOptions, head?: string, pathText?: string, escape?: string, bare?: string): string {
  if (whole === '$${') return '${';
  if (bare !== undefined) {
    if (options.bare !== true) return whole;
    if (escape !== undefined) return `$${bare}`;
    return resolve(bare, [], offset) ?? whole;
  }
  return resolve(head ?? '', splitPath(pathText ?? ''), offset) ?? whole;
}

/**
 * Throws ExpansionLimitError as soon as the result would pass MAX_EXPANDED_VALUE_LENGTH, before
 * the oversized string is built.
 */
export function expandReferences(text: string, resolve: ReferenceResolver, options: ExpandOptions = {}): string {
  if (!text.includes('$')) return text;
  let length = text.length;
  return text.replace(REFERENCE, (whole: string, head: string | undefined, pathText: string | undefined, escape: string | undefined, bare: string | undefined, offset: number) => {
    const value = substitute(whole, resolve, offset, options, head, pathText, escape, bare);
    length += value.length - whole.length;
    if (length > MAX_EXPANDED_VALUE_LENGTH) throw new ExpansionLimitError(length);
    return value;
  });
}

/** Expansion against plain variables: `${NAME}` and JSON paths into NAME's value. */
export function expandVariables(text: string, lookup: (name: string) => string | undefined, options: ExpandOptions = {}): string {
  return expandReferences(
    text,
    (head, path) => {
      const value = lookup(head);
      if (value === undefined || path.length === 0) return value;
      return readJsonPath(value, path);
    },
    options,
  );
}
