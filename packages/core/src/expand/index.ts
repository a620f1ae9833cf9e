/**
 * `${...}` references, expanded as a pure function.
 *  - `${NAME}`: the value of NAME.
 *  - `${NAME.a.b[0]}`: NAME's value parsed as JSON and walked; strings come out raw, other
 *    values as JSON. Step references (`${step.stdout}`, `${step.exit_code}`,
 *    `${STEP.outputs.key}`) go through the same resolver, which the engine supplies.
 *  - A reference nothing resolves is left exactly as written, so the shell may still expand it
 *    (and `${VAR:-default}` style shell syntax passes through untouched).
 *  - `$${` writes a literal `${`. Bare `$NAME` is expanded only when asked (`bare: true`), since
 *    in commands the shell does that itself from the environment.
 */

/** Resolves a reference: `head` is the name before the first `.` or `[`, `path` the rest. */
export type ReferenceResolver = (head: string, path: string[]) => string | undefined;

export interface ExpandOptions {
  /** Also expand bare `$NAME` (for values that never reach a shell). */
  bare?: boolean;
}

const REFERENCE = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)((?:\.[A-Za-z0-9_-]+|\[\d+\])*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g;

function splitPath(text: string): string[] {
  const out: string[] = [];
  for (const match of text.matchAll(/\.([A-Za-z0-9_-]+)|\[(\d+)\]/g)) out.push(match[1] ?? match[2] ?? '');
  return out;
}

/** Walks a JSON document along `path`; undefined when the text is not JSON or the path is missing. */
export function readJsonPath(json: string, path: string[]): string | undefined {
  let current: unknown;
  try {
    current = JSON.parse(json);
  } catch {
    return undefined;
  }
  for (const segment of path) {
    if (Array.isArray(current) && /^\d+$/.test(segment)) current = current[Number(segment)];
    else if (current !== null && typeof current === 'object' && Object.hasOwn(current, segment)) current = (current as Record<string, unknown>)[segment];
    else return undefined;
    if (current === undefined) return undefined;
  }
  return typeof current === 'string' ? current : JSON.stringify(current);
}

export function expandReferences(text: string, resolve: ReferenceResolver, options: ExpandOptions = {}): string {
  if (!text.includes('$')) return text;
  return text.replace(REFERENCE, (whole, head: string | undefined, pathText: string | undefined, bare: string | undefined) => {
    if (whole === '$${') return '${';
    if (bare !== undefined) return options.bare === true ? (resolve(bare, []) ?? whole) : whole;
    return resolve(head ?? '', splitPath(pathText ?? '')) ?? whole;
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
