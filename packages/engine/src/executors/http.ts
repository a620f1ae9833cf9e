import { Agent, fetch, type RequestInit } from 'undici';
import { z } from 'zod';
import type { StepExecutionContext, StepExecutor } from './types.js';

const configSchema = z.object({
  headers: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
  body: z.unknown().optional(),
  query: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
  timeout: z.number().positive().optional(),
  silent: z.boolean().optional(),
  tls_skip_verify: z.boolean().optional(),
});

const insecureAgent = new Agent({ connect: { rejectUnauthorized: false } });

function buildRequest(ctx: StepExecutionContext): { url: URL; init: RequestInit; silent: boolean } | { error: string } {
  const parsed = configSchema.safeParse(ctx.step.config);
  if (!parsed.success) return { error: `invalid http config: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}` };
  const config = parsed.data;
  const match = /^\s*([A-Za-z]+)\s+(\S+)\s*$/.exec(ctx.step.commands[0] ?? '');
  if (match === null) return { error: 'http step command must be "METHOD url", e.g. "GET https://example.com"' };
  let url: URL;
  try {
    url = new URL(match[2] ?? '');
  } catch {
    return { error: `invalid URL "${match[2] ?? ''}"` };
  }
  for (const [key, value] of Object.entries(config.query ?? {})) url.searchParams.set(key, String(value));
  const headers: Record<string, string> = Object.fromEntries(Object.entries(config.headers ?? {}).map(([k, v]) => [k, String(v)]));
  const init: RequestInit = { method: (match[1] ?? 'GET').toUpperCase(), headers };
  if (config.body !== undefined && config.body !== null) {
    if (typeof config.body === 'string') init.body = config.body;
    else {
      init.body = JSON.stringify(config.body);
      if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
    }
  }
  if (config.tls_skip_verify === true) init.dispatcher = insecureAgent;
  const signals = [ctx.signal];
  if (config.timeout !== undefined) signals.push(AbortSignal.timeout(config.timeout * 1000));
  init.signal = AbortSignal.any(signals);
  return { url, init, silent: config.silent === true };
}

/** `type: http`: command `METHOD url`; a non-2xx answer fails the step. The body streams to stdout. */
export const httpExecutor: StepExecutor = {
  type: 'http',
  async run(ctx) {
    const request = buildRequest(ctx);
    if ('error' in request) {
      ctx.stderr.write(`${request.error}\n`);
      return { exitCode: 1, error: request.error };
    }
    try {
      const response = await fetch(request.url, request.init);
      if (!request.silent) {
        ctx.stdout.write(`HTTP ${response.status} ${response.statusText}\n`);
        for (const [name, value] of response.headers) ctx.stdout.write(`${name}: ${value}\n`);
        ctx.stdout.write('\n');
      }
      if (response.body !== null) for await (const chunk of response.body) ctx.stdout.write(chunk as Uint8Array);
      if (response.status < 200 || response.status > 299) {
        const error = `HTTP ${response.status} ${response.statusText}`.trim();
        ctx.stderr.write(`${error}\n`);
        return { exitCode: 1, error };
      }
      return { exitCode: 0 };
    } catch (error) {
      if (ctx.signal.aborted) return { exitCode: 1, stopped: true, error: 'request stopped' };
      const err = error as Error & { cause?: Error };
      const message = err.name === 'TimeoutError' ? 'request timed out' : `request failed: ${err.cause?.message ?? err.message}`;
      ctx.stderr.write(`${message}\n`);
      return { exitCode: 1, error: message };
    }
  },
};
