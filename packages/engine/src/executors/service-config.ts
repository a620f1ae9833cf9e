import type { Writable } from 'node:stream';
import { z } from 'zod';

/**
 * Shapes shared by the executors that talk to a service (mail, redis, s3). Their config was
 * checked when the DAG was loaded, but `${VAR}` values are only known now: a port or a flag
 * may arrive as a string, and is checked again after expansion.
 */
export const flag = z.union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')], { error: 'must be true or false' });
export const portNumber = z.coerce.number({ error: 'must be a port number (1-65535)' }).int().min(1).max(65535);
export const secondsToMs = z.coerce.number({ error: 'must be a positive number of seconds' }).positive().transform((s) => s * 1000);
export const nonNegativeInt = z.coerce.number({ error: 'must be a non-negative integer' }).int().min(0);
export const positiveInt = z.coerce.number({ error: 'must be a positive integer' }).int().min(1);

export function issuesOf(error: z.ZodError, base = 'config'): string {
  return error.issues.map((i) => `${[base, ...i.path.map(String)].join('.')}: ${i.message}`).join('; ');
}

/** The step failed for a reason the user should read: written to its stderr with the executor's name, and the node's error. */
export function failWith(stderr: Writable, type: string, error: string): { exitCode: number; error: string } {
  stderr.write(`${type}: ${error}\n`);
  return { exitCode: 1, error };
}
