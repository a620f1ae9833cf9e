export * from './paths.js';

/** DAG file names address definitions in URL paths (see isValidDagFileName for the length). */
export const DAG_FILE_NAME = /^[a-zA-Z0-9_-]+$/;
/** A DAG file in the DAGs folder: `<file name>.yaml` or `.yml`; group 1 is the file name. */
const DAG_FILE = /^([a-zA-Z0-9_-]+)\.ya?ml$/;
const WORKER_ID = /^[A-Za-z0-9_.:@-]{1,128}$/;
const RUN_NAME = /^[A-Za-z0-9_.-]+$/;
const ENV_VAR_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const MAX_DAG_NAME_LENGTH = 40;
/**
 * DAG file names become `<name>.yaml` on disk (and `.<name>.<8 hex>.tmp` while written): past
 * this length a file system's 255-byte name limit fails the write with ENAMETOOLONG.
 */
export const MAX_DAG_FILE_NAME_LENGTH = 200;

/** DAG file names address definitions in URL paths: `^[a-zA-Z0-9_-]+$`, at most 200 characters. */
export function isValidDagFileName(value: string): boolean {
  return value.length <= MAX_DAG_FILE_NAME_LENGTH && DAG_FILE_NAME.test(value);
}

/** Inline run names: at most 40 characters of `[A-Za-z0-9_.-]`. */
export function isValidInlineRunName(value: string): boolean {
  return value.length <= MAX_DAG_NAME_LENGTH && RUN_NAME.test(value);
}

/** The rule for `name:` fields and `dagName` overrides; returns the problem, or undefined when valid. */
export function validateDagName(value: string): string | undefined {
  if (value.length === 0) return 'must not be empty';
  if (value.length > MAX_DAG_NAME_LENGTH) return `must be at most ${MAX_DAG_NAME_LENGTH} characters`;
  if (!RUN_NAME.test(value)) return 'may contain only letters, digits, "_", "." and "-"';
  return undefined;
}

/** Run ids appear in paths and file names: the same alphabet as names, up to 64 characters. */
export function validateRunId(value: string): string | undefined {
  if (value.length === 0 || value.length > 64) return 'must be 1-64 characters';
  if (!RUN_NAME.test(value)) return 'may contain only letters, digits, "_", "." and "-"';
  return undefined;
}

/** Names a step can read as environment variables: a letter or `_`, then letters, digits, `_`. */
export function isEnvVarName(value: string): boolean {
  return ENV_VAR_NAME.test(value);
}

/** The DAG file name of a DAGs-folder entry (`<name>.yaml` or `.yml`), or undefined for any other entry. */
export function dagFileNameOf(entry: string): string | undefined {
  return DAG_FILE.exec(entry)?.[1];
}

/** Worker ids name a worker in logs, metrics and run records: 1-128 characters of `[A-Za-z0-9_.:@-]`. */
export function isValidWorkerId(value: string): boolean {
  return WORKER_ID.test(value);
}
export * from './profiles.js';
