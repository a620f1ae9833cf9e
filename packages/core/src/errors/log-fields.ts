/**
 * What a log line may say about an error: its message, its code, the errors it wraps, and its
 * stack only when asked (debug). Nothing else: a `pg` error may carry the whole client
 * (connection parameters, backend cancel key), a Node error its syscall details, and
 * `JSON.stringify` of an Error prints `{}` since message and stack are not enumerable.
 */
export interface ErrorLogFields {
  message: string;
  name?: string;
  code?: string;
  cause?: ErrorLogFields;
  /** The errors of an AggregateError (a connection refused on every address of a host). */
  errors?: ErrorLogFields[];
  stack?: string;
}

export interface ErrorLogOptions {
  /** Include stacks (debug level). */
  stack: boolean;
}

/** Causes and aggregates deeper than this are cut: a cycle or a long chain must not flood a line. */
const MAX_DEPTH = 3;
const MAX_AGGREGATE = 5;

function codeOf(error: Error): string | undefined {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' || typeof code === 'number' ? String(code) : undefined;
}

/** The fields of one error; an AggregateError with an empty message takes its members' messages. */
export function errorLogFields(error: Error, options: ErrorLogOptions, depth = 0): ErrorLogFields {
  const members = error instanceof AggregateError && depth < MAX_DEPTH ? (error.errors as unknown[]).filter((e): e is Error => e instanceof Error).slice(0, MAX_AGGREGATE) : [];
  const message = error.message !== '' ? error.message : members.map((e) => e.message).join('; ') || String(codeOf(error) ?? error.name);
  const fields: ErrorLogFields = { message };
  if (error.name !== 'Error') fields.name = error.name;
  const code = codeOf(error);
  if (code !== undefined) fields.code = code;
  if (error.cause instanceof Error && depth < MAX_DEPTH) fields.cause = errorLogFields(error.cause, options, depth + 1);
  if (members.length > 0) fields.errors = members.map((e) => errorLogFields(e, options, depth + 1));
  if (options.stack && typeof error.stack === 'string') fields.stack = error.stack;
  return fields;
}

/**
 * Log metadata with every Error in it (at any depth of plain objects and arrays) replaced by its
 * fields; everything else is kept as it is.
 */
export function withErrorLogFields(value: unknown, options: ErrorLogOptions, depth = 0): unknown {
  if (value instanceof Error) return errorLogFields(value, options);
  if (depth >= MAX_DEPTH || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.some((v) => v instanceof Error || (typeof v === 'object' && v !== null)) ? value.map((v) => withErrorLogFields(v, options, depth + 1)) : value;
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  let changed: Record<string, unknown> | undefined;
  for (const [key, item] of Object.entries(value)) {
    const mapped = withErrorLogFields(item, options, depth + 1);
    if (mapped !== item) (changed ??= { ...(value as Record<string, unknown>) })[key] = mapped;
  }
  return changed ?? value;
}

/** triple-beam's key for the arguments after the message (winston, logform): a global symbol. */
const SPLAT = Symbol.for('splat');

/** A winston `info` object: string keys are the line's fields, symbol keys winston's own. */
export type LogInfo = Record<string | symbol, unknown>;

/**
 * A log line made safe for errors, in the three shapes winston produces: `log(error)` (the info
 * is the Error), `log('msg', error)` (the error's enumerable fields were merged into the info),
 * and `log('msg', { error })` (an Error in the metadata). Each error leaves only its fields;
 * a top-level `stack` stays only when stacks are wanted. Symbol keys are kept.
 */
export function safeLogInfo(info: LogInfo, options: ErrorLogOptions): LogInfo {
  let out: LogInfo = info;
  if (info instanceof Error) {
    const { message, ...rest } = errorLogFields(info, options);
    out = { ...symbolsOf(info), level: info.level, message, ...rest };
  } else if (info.message instanceof Error) {
    const { message, ...rest } = errorLogFields(info.message, options);
    out = { ...info, message, ...rest };
  } else {
    const first = (info[SPLAT] as unknown[] | undefined)?.[0];
    if (first instanceof Error) {
      out = { ...info };
      for (const key of Object.keys(first)) delete out[key];
      delete out.stack;
      delete out.cause;
      out.error = errorLogFields(first, options);
    }
  }
  const safe: LogInfo = { ...symbolsOf(out) };
  for (const [key, value] of Object.entries(out)) {
    if (key === 'stack' && !options.stack) continue;
    safe[key] = key === 'message' || key === 'level' ? value : withErrorLogFields(value, options);
  }
  return safe;
}

function symbolsOf(info: LogInfo): LogInfo {
  return Object.fromEntries(Object.getOwnPropertySymbols(info).map((s) => [s, info[s]]));
}
