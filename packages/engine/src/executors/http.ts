import type { IncomingHttpHeaders } from 'node:http';
import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Agent, interceptors, request, type Dispatcher } from 'undici';
import { z } from 'zod';
import { toError } from '@trellis/core';
import type { StepExecutionContext, StepExecutionResult, StepExecutor } from './types.js';

// Config values may arrive as strings after `${VAR}` expansion, so "30" and "true" are accepted too.
const flag = z.union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')]);
const scalar = z.union([z.string(), z.number(), z.boolean()]).transform(String);
const seconds = z.union([z.number(), z.string().regex(/^\d+(\.\d+)?$/, 'must be a number of seconds').transform(Number)]).pipe(z.number().positive());

const configSchema = z.object({
  headers: z.record(z.string(), scalar).optional(),
  body: z.union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())]).nullish(),
  query: z.record(z.string(), scalar).optional(),
  timeout: seconds.optional(),
  silent: flag.optional(),
  tls_skip_verify: flag.optional(),
});

const MAX_REDIRECTIONS = 10;

interface HttpRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: string;
  timeoutMs?: number;
  silent: boolean;
  tlsSkipVerify: boolean;
}

function issuesOf(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.') || 'config'}: ${i.message}`).join('; ');
}

function parseCommand(command: string | undefined): { method: string; url: URL } | string {
  const match = /^\s*([A-Za-z]+)\s+(\S+)\s*$/.exec(command ?? '');
  if (match?.[1] === undefined || match[2] === undefined) return 'http step command must be "METHOD url", e.g. "GET https://example.com/health"';
  let url: URL;
  try {
    url = new URL(match[2]);
  } catch {
    return `invalid URL "${match[2]}"`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `unsupported URL scheme "${url.protocol}" (http or https)`;
  return { method: match[1].toUpperCase(), url };
}

/** An object body is sent as JSON, with a JSON content type unless the step sets its own. */
function encodeBody(body: string | object, headers: Record<string, string>): string {
  if (typeof body === 'string') return body;
  if (!Object.keys(headers).some((name) => name.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
  return JSON.stringify(body);
}

function parseRequest(step: StepExecutionContext['step']): HttpRequest | string {
  const parsed = configSchema.safeParse(step.config);
  if (!parsed.success) return `invalid http config: ${issuesOf(parsed.error)}`;
  const target = parseCommand(step.commands[0]);
  if (typeof target === 'string') return target;
  const config = parsed.data;
  for (const [key, value] of Object.entries(config.query ?? {})) target.url.searchParams.append(key, value);
  const headers = { ...config.headers };
  const req: HttpRequest = { ...target, headers, silent: config.silent ?? false, tlsSkipVerify: config.tls_skip_verify ?? false };
  if (config.body !== undefined && config.body !== null) req.body = encodeBody(config.body, headers);
  if (config.timeout !== undefined) req.timeoutMs = config.timeout * 1000;
  return req;
}

/** The URL as it may appear in logs: a password in it is masked. */
function printable(url: URL): string {
  if (url.password === '') return url.href;
  const copy = new URL(url.href);
  copy.password = '***';
  return copy.href;
}

/** Status line, headers and a blank line, the way `curl -i` shows a response. */
function writeHead(out: Writable, statusCode: number, statusText: string, headers: IncomingHttpHeaders): void {
  const lines = [`HTTP ${statusCode} ${statusText}`.trimEnd()];
  for (const [name, value] of Object.entries(headers)) {
    for (const v of Array.isArray(value) ? value : [value ?? '']) lines.push(`${name}: ${v}`);
  }
  out.write(`${lines.join('\n')}\n\n`);
}

function dispatcherFor(req: HttpRequest): Agent {
  return new Agent(req.tlsSkipVerify ? { connect: { rejectUnauthorized: false } } : {});
}

/** undici reports socket and TLS failures as the error or its cause; both read better together. */
function describe(error: Error): string {
  const cause = error.cause instanceof Error ? error.cause : undefined;
  const code = (error as Error & { code?: string }).code;
  const parts = [error.message];
  if (cause !== undefined && cause.message !== error.message) parts.push(cause.message);
  if (code !== undefined && !error.message.includes(code)) parts.push(code);
  return parts.join(': ');
}

function failure(ctx: StepExecutionContext, error: string): StepExecutionResult {
  ctx.stderr.write(`http: ${error}\n`);
  return { exitCode: 1, error };
}

async function send(req: HttpRequest, ctx: StepExecutionContext, signal: AbortSignal, agent: Dispatcher): Promise<StepExecutionResult> {
  const dispatcher = agent.compose(interceptors.redirect({ maxRedirections: MAX_REDIRECTIONS }));
  const response = await request(req.url, { method: req.method, headers: req.headers, body: req.body ?? null, signal, dispatcher });
  if (!req.silent) writeHead(ctx.stdout, response.statusCode, response.statusText, response.headers);
  // The body goes to the log as it arrives; the runner owns stdout, so it stays open.
  await pipeline(response.body, ctx.stdout, { end: false });
  const status = `${response.statusCode} ${response.statusText}`.trimEnd();
  if (response.statusCode < 200 || response.statusCode > 299) return failure(ctx, `HTTP ${status}`);
  ctx.stderr.write(`http: ${status}\n`);
  return { exitCode: 0 };
}

/**
 * `type: http`: the command is `METHOD url`; config headers, body (a string, or an object sent
 * as JSON), query, timeout (seconds), silent (body only) and tls_skip_verify. A response
 * outside 2xx fails the step after its body is written.
 */
export const httpExecutor: StepExecutor = {
  type: 'http',
  async run(ctx) {
    const req = parseRequest(ctx.step);
    if (typeof req === 'string') return failure(ctx, req);
    const timeout = req.timeoutMs === undefined ? undefined : AbortSignal.timeout(req.timeoutMs);
    const signal = timeout === undefined ? ctx.signal : AbortSignal.any([ctx.signal, timeout]);
    const agent = dispatcherFor(req);
    ctx.stderr.write(`http: ${req.method} ${printable(req.url)}\n`);
    try {
      return await send(req, ctx, signal, agent);
    } catch (caught) {
      if (ctx.signal.aborted) return { exitCode: 1, stopped: true, error: 'request stopped' };
      if (timeout?.aborted === true) return failure(ctx, `request timed out after ${(req.timeoutMs ?? 0) / 1000} s`);
      return failure(ctx, `request failed: ${describe(toError(caught))}`);
    } finally {
      await agent.destroy();
    }
  },
};
