import { homedir } from 'node:os';
import { join } from 'node:path';
import type { z } from 'zod';

/** Helpers the executors that run a step somewhere else (ssh, docker) share. */

/** One line naming each problem of a config by its field. */
export function configIssues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.') || 'config'}: ${i.message}`).join('; ');
}

/** A flag after `${VAR}` expansion: a boolean, or the text "true"/"false". */
export function flagOf(value: boolean | string | undefined, field: string): boolean | undefined {
  if (value === undefined || typeof value === 'boolean') return value;
  if (value === 'true' || value === 'false') return value === 'true';
  throw new Error(`invalid config: ${field}: must be true or false, got "${value}"`);
}

/** `~/x` in the step's home directory (its HOME, else the worker's). */
export function homePath(path: string, env: Record<string, string>): string {
  return path === '~' || path.startsWith('~/') ? join(env.HOME ?? homedir(), path.slice(1)) : path;
}

/** One word for a POSIX shell, whatever it holds. */
export function posixQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
