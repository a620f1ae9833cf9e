import { isCollection, parseAllDocuments, type Document } from 'yaml';
import type { Dag, DagLoadResult, LocalDag } from '../model/dag.js';
import { Issues, describeType } from './issues.js';
import { isRecord } from './fields.js';
import { normalizeDag } from './dag.js';
import { MAX_DAGS_PER_FILE, MAX_SPEC_BYTES, MAX_STEPS_PER_DAG } from './limits.js';
import { toError } from '../errors/to-error.js';

/** A base configuration: root fields every DAG inherits unless it sets them. */
export interface BaseConfig {
  raw: Record<string, unknown>;
}

export interface LoadDagOptions {
  /** File name without extension: the DAG's name when the YAML has none. */
  fileName?: string;
  base?: BaseConfig;
  /** Sub-DAGs do not inherit the base configuration's handlers. */
  isSubDag?: boolean;
}

/** Alias expansion cap: defeats "billion laughs" documents. */
const MAX_ALIAS_COUNT = 100;

interface ParsedDocs {
  docs: unknown[];
  errors: string[];
}

function yamlErrors(doc: Document.Parsed, index: number, total: number): string[] {
  const where = total > 1 ? `document ${index + 1}: ` : '';
  // prettyErrors appends a source excerpt after the first line; the first line names line and column.
  return doc.errors.map((e) => `${where}invalid YAML: ${(e.message.split('\n')[0] ?? e.message).replace(/:$/, '')}`);
}

/** The line of the first NUL character: no store keeps one, so a spec holding one is never valid. */
function nulLine(text: string): number | undefined {
  const at = text.indexOf('\u0000');
  return at < 0 ? undefined : text.slice(0, at).split('\n').length;
}

/** The path of the first parsed string (value or key) holding a NUL, which YAML's `"\0"` escape writes. */
function nulValuePath(doc: unknown): string | undefined {
  const pending: Array<[unknown, string]> = [[doc, '']];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [value, path] = next;
    if (typeof value === 'string' && value.includes('\u0000')) return path || '(document)';
    if (typeof value !== 'object' || value === null) continue;
    for (const [key, child] of Object.entries(value)) {
      const childPath = Array.isArray(value) ? `${path}[${key}]` : path === '' ? key : `${path}.${key}`;
      if (key.includes('\u0000')) return childPath;
      pending.push([child, childPath]);
    }
  }
  return undefined;
}

/** Problems found before parsing: size and characters no definition may have. */
function textProblems(text: string): string[] {
  if (Buffer.byteLength(text, 'utf8') > MAX_SPEC_BYTES) return [`the definition is larger than the limit of ${MAX_SPEC_BYTES} bytes (MAX_SPEC_BYTES)`];
  const line = nulLine(text);
  return line !== undefined ? [`line ${line}: the definition contains a NUL character`] : [];
}

/** Too many steps, counted on the parsed syntax tree: before it becomes objects and steps. */
function stepCountProblems(doc: Document.Parsed, where: string): string[] {
  const steps = doc.get('steps', true);
  const count = isCollection(steps) ? steps.items.length : 0;
  return count > MAX_STEPS_PER_DAG ? [`${where}steps: ${count} steps exceed the limit of ${MAX_STEPS_PER_DAG} per DAG (MAX_STEPS_PER_DAG)`] : [];
}

/** Values no definition may hold, found once the document is plain data. */
function valueProblems(doc: unknown, where: string): string[] {
  const nulAt = nulValuePath(doc);
  return nulAt !== undefined ? [`${where}${nulAt}: must not contain a NUL character`] : [];
}

function parseDocuments(text: string): ParsedDocs {
  const refused = textProblems(text);
  if (refused.length > 0) return { docs: [], errors: refused };
  let parsed: Document.Parsed[];
  try {
    parsed = parseAllDocuments(text, { prettyErrors: true, uniqueKeys: true }) as Document.Parsed[];
  } catch (error) {
    return { docs: [], errors: [`invalid YAML: ${toError(error).message}`] };
  }
  if (!Array.isArray(parsed)) return { docs: [], errors: ['invalid YAML: could not read the document stream'] };
  if (parsed.length > MAX_DAGS_PER_FILE) return { docs: [], errors: [`the file holds ${parsed.length} YAML documents; the limit is ${MAX_DAGS_PER_FILE} DAGs per file (MAX_DAGS_PER_FILE)`] };
  const errors: string[] = [];
  const docs: unknown[] = [];
  parsed.forEach((doc, i) => {
    const problems = yamlErrors(doc, i, parsed.length);
    if (problems.length > 0) {
      errors.push(...problems);
      docs.push(undefined);
      return;
    }
    const where = parsed.length > 1 ? `document ${i + 1}: ` : '';
    const tooLarge = stepCountProblems(doc, where);
    if (tooLarge.length > 0) {
      errors.push(...tooLarge);
      docs.push(undefined);
      return;
    }
    try {
      const value: unknown = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
      const refusedDoc = valueProblems(value, where);
      errors.push(...refusedDoc);
      docs.push(refusedDoc.length > 0 ? undefined : value);
    } catch (error) {
      errors.push(`${parsed.length > 1 ? `document ${i + 1}: ` : ''}invalid YAML: ${toError(error).message}`);
      docs.push(undefined);
    }
  });
  return { docs, errors };
}

function envList(value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  if (isRecord(value)) return Object.entries(value).map(([k, v]) => ({ [k]: v }));
  return [];
}

/** Base fields fill in what the DAG leaves unset; env is merged (base first, so the DAG's entries win). */
function withBase(raw: Record<string, unknown>, base: BaseConfig | undefined, isSubDag: boolean): Record<string, unknown> {
  if (base === undefined) return raw;
  const out = { ...raw };
  for (const [key, value] of Object.entries(base.raw)) {
    if (key === 'name' || key === 'steps') continue;
    if (key === 'handler_on' && isSubDag) continue;
    if (key === 'env' && raw.env !== undefined) out.env = [...envList(value), ...envList(raw.env)];
    else if (!(key in raw)) out[key] = value;
  }
  return out;
}

interface Normalized {
  dag?: Dag;
  errors: string[];
  warnings: string[];
}

function toDag(doc: unknown, fallbackName: string, options: LoadDagOptions, isSubDag: boolean): Normalized {
  if (!isRecord(doc)) {
    return { errors: [doc === undefined || doc === null ? 'the definition is empty' : `the definition must be a YAML mapping, got ${describeType(doc)}`], warnings: [] };
  }
  const issues = new Issues();
  const dag = normalizeDag(withBase(doc, options.base, isSubDag), fallbackName, issues);
  return issues.count > 0 ? { errors: issues.list, warnings: issues.warnings } : { dag, errors: [], warnings: issues.warnings };
}

function localDagsOf(docs: unknown[], options: LoadDagOptions): Array<{ local: LocalDag; warnings: string[] }> {
  const seen = new Set<string>();
  return docs.map((doc, i) => {
    const name = isRecord(doc) && typeof doc.name === 'string' ? doc.name : `document_${i + 2}`;
    if (!isRecord(doc) || typeof doc.name !== 'string') {
      return { local: { name, errors: [`document ${i + 2}: a local DAG needs a name`] }, warnings: [] };
    }
    const result = toDag(doc, name, options, true);
    const errors = [...result.errors];
    if (seen.has(name)) errors.push(`duplicate local DAG name "${name}"`);
    seen.add(name);
    return { local: { name, ...(result.dag !== undefined && errors.length === 0 ? { dag: result.dag } : {}), errors }, warnings: result.warnings };
  });
}

/**
 * Loads one DAG file. The first YAML document is the DAG; the others are local DAGs its steps
 * can call by name. Returns every problem at once and never throws, whatever the input.
 */
export function loadDag(text: string, options: LoadDagOptions = {}): DagLoadResult {
  try {
    const { docs, errors } = parseDocuments(text);
    if (docs.length === 0) return { localDags: [], errors: errors.length > 0 ? errors : ['the definition is empty'], warnings: [] };
    const fallbackName = options.fileName ?? 'dag';
    const main: Normalized = errors.length > 0 && docs[0] === undefined ? { errors: [], warnings: [] } : toDag(docs[0], fallbackName, options, options.isSubDag ?? false);
    const locals = localDagsOf(docs.slice(1), options);
    const localDags = locals.map((l) => l.local);
    const warnings = [...main.warnings, ...locals.flatMap((l) => l.warnings.map((w) => `local DAG ${l.local.name}: ${w}`))];
    const allErrors = [...errors, ...main.errors];
    return { ...(main.dag !== undefined && allErrors.length === 0 ? { dag: main.dag } : {}), localDags, errors: allErrors, warnings };
  } catch (error) {
    // Validation must never surface an exception; this is the last line of that promise.
    return { localDags: [], errors: [`internal validation error: ${toError(error).message}`], warnings: [] };
  }
}

/** Reads a base configuration file; it must be a valid partial DAG without steps. */
export function parseBaseConfig(text: string): { base?: BaseConfig; errors: string[] } {
  const { docs, errors } = parseDocuments(text);
  if (errors.length > 0) return { errors };
  const doc = docs[0];
  if (doc === undefined || doc === null) return { base: { raw: {} }, errors: [] };
  if (!isRecord(doc)) return { errors: [`the base configuration must be a YAML mapping, got ${describeType(doc)}`] };
  if (doc.steps !== undefined) return { errors: ['steps: a base configuration cannot define steps'] };
  const issues = new Issues();
  normalizeDag({ ...doc, steps: [{ name: 'base_check', command: 'true' }] }, 'base', issues);
  return issues.count > 0 ? { errors: issues.list } : { base: { raw: doc }, errors: [] };
}
