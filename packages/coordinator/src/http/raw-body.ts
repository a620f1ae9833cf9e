import type { IncomingMessage } from 'node:http';

/**
 * The bytes of a request body as received, for the routes that verify a signature over them
 * (webhook calls). Only those keep it: other bodies are parsed and the bytes let go.
 */
const rawBodies = new WeakMap<IncomingMessage, Buffer>();

/** Paths under the API whose raw bodies are kept. */
const KEEPS_RAW_BODY = /^\/webhooks\/[^/]+\/?$/;

/** The JSON parser's `verify` hook. */
export function keepRawBody(req: IncomingMessage & { path?: string }, _res: unknown, body: Buffer): void {
  if (KEEPS_RAW_BODY.test(req.path ?? '')) rawBodies.set(req, body);
}

/** The raw body of a request whose route keeps it; empty when it had none. */
export function rawBodyOf(req: IncomingMessage): Buffer {
  return rawBodies.get(req) ?? Buffer.alloc(0);
}
