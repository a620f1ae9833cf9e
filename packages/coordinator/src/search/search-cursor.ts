import { z } from 'zod';
import { BadRequestError } from '@trellis/core';

/**
 * What a cursor continues: a result list (`dags`, `docs`) resumes after a key, one item's
 * matches (`dag:<fileName>`, `doc:<id>`) after a line number. The query is inside, so a cursor
 * only continues the search that returned it.
 */
const cursorSchema = z.object({
  scope: z.string(),
  q: z.string(),
  after: z.union([z.string(), z.number().int().min(0)]),
});

type Cursor = z.output<typeof cursorSchema>;

/** Opaque to clients: base64url of the position. */
export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify(cursor), 'utf8').toString('base64url');
}

function invalid(reason: string): BadRequestError {
  return new BadRequestError(`invalid cursor: ${reason}`, { field: 'cursor' });
}

function parse(text: string): Cursor {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw invalid('not a cursor this service returned');
  }
  const parsed = cursorSchema.safeParse(value);
  if (!parsed.success) throw invalid('not a cursor this service returned');
  return parsed.data;
}

function decode(text: string, scope: string, q: string): Cursor['after'] {
  const cursor = parse(text);
  if (cursor.scope !== scope || cursor.q !== q) throw invalid('it continues a different search');
  return cursor.after;
}

/** The key a result list resumes after. */
export function keyCursor(text: string, scope: string, q: string): string {
  const after = decode(text, scope, q);
  if (typeof after !== 'string') throw invalid('not a cursor of this list');
  return after;
}

/** The line number one item's matches resume after. */
export function lineCursor(text: string, scope: string, q: string): number {
  const after = decode(text, scope, q);
  if (typeof after !== 'number') throw invalid('not a cursor of these matches');
  return after;
}
