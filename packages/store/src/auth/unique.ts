import { AlreadyExistsError } from '@trellis/core';

/** A statement broke a UNIQUE constraint (PostgreSQL and PGlite report SQLSTATE 23505). */
export function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505';
}

/** A name (API key name, a DAG's webhook) that must be unique is taken. */
export class NameTakenError extends AlreadyExistsError {
  constructor(what: string) {
    super(`${what} already exists`);
  }
}
