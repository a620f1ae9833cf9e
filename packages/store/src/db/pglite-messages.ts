/** What the coordinator's thread asks of the thread that holds PGlite (see pglite-thread.ts). */
export type PgliteRequest =
  | { id: number; op: 'query'; sql: string; params: unknown[] | undefined; tx: number | undefined }
  | { id: number; op: 'exec'; sql: string }
  /** Opens transaction `tx`: answered once it holds the session, as PGlite's transaction callback starts. */
  | { id: number; op: 'begin'; tx: number }
  /** Ends transaction `tx`: answered once it is committed (or rolled back) and the session is free. */
  | { id: number; op: 'end'; tx: number; commit: boolean }
  | { id: number; op: 'close' };

/** A database error as plain data: its message and the fields callers read (`code`, `constraint`, ...). */
export interface ErrorData {
  message: string;
  name: string;
  fields: Record<string, string | number | boolean>;
}

export type PgliteReply = { id: number; rows: unknown[] } | { id: number; error: ErrorData };

/** The thread's first word: PGlite is open, or why it could not be. */
export type PgliteReady = { ready: true } | { ready: false; error: ErrorData };

/** What the thread is given at start: the cluster directory, or none for a database in memory. */
export interface PgliteThreadData {
  pgdata: string | undefined;
}

/**
 * What a `catch` in the thread received, as an Error. The thread does not load @trellis/core (its
 * toError), which would put the whole DAG model in the thread's memory for one function.
 */
export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

export function errorData(error: unknown): ErrorData {
  const err = asError(error);
  const fields: ErrorData['fields'] = {};
  for (const [key, value] of Object.entries(err)) {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') fields[key] = value;
  }
  return { message: err.message, name: err.name, fields };
}

/** The error again on this side of the thread boundary, with the fields callers test (`code` above all). */
export function errorFrom(data: ErrorData): Error {
  const error = Object.assign(new Error(data.message), data.fields);
  error.name = data.name;
  return error;
}
