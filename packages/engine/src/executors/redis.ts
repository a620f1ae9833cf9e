import type { Cluster, Redis, RedisOptions } from 'ioredis';
import { z } from 'zod';
import { splitShellWords, toError } from '@trellis/core';
import { failWith, flag, issuesOf, nonNegativeInt, portNumber, secondsToMs } from './service-config.js';
import type { StepExecutionContext, StepExecutionResult, StepExecutor } from './types.js';

const address = z.string().regex(/^[^\s:]+:\d{1,5}$/, 'must be host:port').transform((text) => {
  const at = text.lastIndexOf(':');
  return { host: text.slice(0, at), port: Number(text.slice(at + 1)) };
});

/** The step's `config` over the DAG-level `redis`, after expansion. */
const redisSchema = z.object({
  url: z.string().optional(),
  host: z.string().min(1).default('127.0.0.1'),
  port: portNumber.default(6379),
  username: z.string().optional(),
  password: z.string().optional(),
  db: nonNegativeInt.optional(),
  mode: z.enum(['standalone', 'sentinel', 'cluster']).default('standalone'),
  sentinel_master: z.string().min(1).optional(),
  sentinel_addrs: z.array(address).min(1).optional(),
  cluster_addrs: z.array(address).min(1).optional(),
  tls: flag.optional(),
  tls_skip_verify: flag.optional(),
  timeout: secondsToMs.optional(),
  pipeline: z.array(z.union([z.string(), z.array(z.union([z.string(), z.number(), z.boolean()]).transform(String)).min(1)])).min(1).optional(),
  transaction: flag.optional(),
});
type RedisSettings = z.output<typeof redisSchema>;
type Client = Redis | Cluster;

const CONNECT_TIMEOUT_MS = 10_000;

/** Connection options every mode shares; the client never retries on its own: a step fails instead of hanging. */
function baseOptions(settings: RedisSettings): RedisOptions {
  const options: RedisOptions = {
    lazyConnect: true,
    connectTimeout: settings.timeout ?? CONNECT_TIMEOUT_MS,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
  };
  if (settings.timeout !== undefined) options.commandTimeout = settings.timeout;
  if (settings.username !== undefined) options.username = settings.username;
  if (settings.password !== undefined) options.password = settings.password;
  if (settings.db !== undefined) options.db = settings.db;
  if (settings.tls === true || settings.tls_skip_verify === true) options.tls = { rejectUnauthorized: settings.tls_skip_verify !== true };
  return options;
}

/** ioredis is imported on the first redis step, so hosts without one never load it. */
async function connect(settings: RedisSettings): Promise<{ client: Client; where: string } | string> {
  const { Redis, Cluster } = await import('ioredis');
  const options = baseOptions(settings);
  if (settings.mode === 'cluster') {
    if (settings.cluster_addrs === undefined) return 'cluster mode needs cluster_addrs';
    const { db: _db, ...redisOptions } = options; // a cluster has one database
    const client = new Cluster(settings.cluster_addrs, { redisOptions, lazyConnect: true, enableOfflineQueue: false, clusterRetryStrategy: () => null });
    return { client, where: `cluster ${settings.cluster_addrs.map((a) => `${a.host}:${a.port}`).join(',')}` };
  }
  if (settings.mode === 'sentinel') {
    if (settings.sentinel_master === undefined || settings.sentinel_addrs === undefined) return 'sentinel mode needs sentinel_master and sentinel_addrs';
    const client = new Redis({ ...options, sentinels: settings.sentinel_addrs, name: settings.sentinel_master, sentinelRetryStrategy: () => null });
    return { client, where: `sentinel master ${settings.sentinel_master} via ${settings.sentinel_addrs.map((a) => `${a.host}:${a.port}`).join(',')}` };
  }
  if (settings.url !== undefined) {
    const client = new Redis(settings.url, options);
    return { client, where: `standalone ${client.options.host}:${client.options.port}` };
  }
  return { client: new Redis({ ...options, host: settings.host, port: settings.port }), where: `standalone ${settings.host}:${settings.port}` };
}

/** A reply as a line of output: text and numbers as they are, anything else as JSON. */
function replyText(reply: unknown): string {
  if (typeof reply === 'string' || typeof reply === 'number') return String(reply);
  if (Buffer.isBuffer(reply)) return reply.toString('utf8');
  return JSON.stringify(reply) ?? 'null';
}

function commandsOf(ctx: StepExecutionContext, settings: RedisSettings): string[][] | string {
  const lines = settings.pipeline ?? ctx.step.commands;
  if (lines.length === 0) return 'a redis step runs a command such as "GET key" (or config.pipeline)';
  const out: string[][] = [];
  for (const line of lines) {
    const words = typeof line === 'string' ? splitShellWords(line) : line;
    if (words === undefined) return `unbalanced quote in "${String(line)}"`;
    if (words.length === 0) return 'empty redis command';
    out.push(words);
  }
  return out;
}

/** Commands one after another; the first error ends the step. */
async function runEach(client: Client, commands: string[][], ctx: StepExecutionContext): Promise<StepExecutionResult> {
  for (const [name = '', ...args] of commands) {
    ctx.stderr.write(`redis: ${name.toUpperCase()}\n`);
    ctx.stdout.write(`${replyText(await client.call(name, ...args))}\n`);
  }
  return { exitCode: 0 };
}

/** One round trip for all commands (inside MULTI/EXEC with `transaction`); every reply is printed, then the first error fails the step. */
async function runPipeline(client: Client, commands: string[][], transaction: boolean, ctx: StepExecutionContext): Promise<StepExecutionResult> {
  ctx.stderr.write(`redis: ${transaction ? 'transaction' : 'pipeline'} of ${commands.length} commands\n`);
  // `call` sends any command by name, as written: the client's own methods are lower-case and known commands only.
  const calls = commands.map((words) => ['call', ...words]);
  const batch = transaction ? client.multi(calls) : client.pipeline(calls);
  const replies = (await batch.exec()) ?? [];
  let firstError: string | undefined;
  replies.forEach(([error, reply], i) => {
    if (error !== null) {
      firstError ??= `command ${i + 1} (${(commands[i]?.[0] ?? '').toUpperCase()}): ${error.message}`;
      ctx.stdout.write(`(error) ${error.message}\n`);
    } else ctx.stdout.write(`${replyText(reply)}\n`);
  });
  return firstError === undefined ? { exitCode: 0 } : failWith(ctx.stderr, 'redis', firstError);
}

/** Resolves when the step is stopped; the caller then drops the connection, which fails what is in flight. */
function stopped(signal: AbortSignal): { promise: Promise<'stopped'>; dispose: () => void } {
  let onAbort = (): void => undefined;
  const promise = new Promise<'stopped'>((resolve) => {
    onAbort = () => resolve('stopped');
    if (signal.aborted) resolve('stopped');
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  return { promise, dispose: () => signal.removeEventListener('abort', onAbort) };
}

async function execute(client: Client, commands: string[][], settings: RedisSettings, ctx: StepExecutionContext): Promise<StepExecutionResult> {
  await client.connect();
  return settings.pipeline !== undefined ? runPipeline(client, commands, settings.transaction === true, ctx) : runEach(client, commands, ctx);
}

/**
 * `type: redis`: each `command` line (`SET key "a value"`) runs in turn, or config.pipeline
 * sends a list of commands in one round trip (`transaction: true` wraps them in MULTI/EXEC).
 * Connection settings come from config over the DAG-level `redis`: standalone (host, port or
 * url, db), sentinel (sentinel_master, sentinel_addrs) or cluster (cluster_addrs). Replies are
 * the step's output, one line each.
 */
export const redisExecutor: StepExecutor = {
  type: 'redis',
  async run(ctx) {
    const parsed = redisSchema.safeParse({ ...ctx.dagDefaults, ...ctx.step.config });
    if (!parsed.success) return failWith(ctx.stderr, 'redis', `invalid redis config: ${issuesOf(parsed.error)}`);
    const settings = parsed.data;
    const commands = commandsOf(ctx, settings);
    if (typeof commands === 'string') return failWith(ctx.stderr, 'redis', commands);
    const connection = await connect(settings);
    if (typeof connection === 'string') return failWith(ctx.stderr, 'redis', connection);
    const { client, where } = connection;
    // A refused connection reaches the caller as "Connection is closed."; the event says why.
    let lastError: Error | undefined;
    client.on('error', (error: Error) => (lastError = error));
    ctx.stderr.write(`redis: ${where}\n`);
    const stop = stopped(ctx.signal);
    try {
      const work = execute(client, commands, settings, ctx);
      work.catch(() => undefined); // after a stop, its rejection is expected and unread
      const outcome = await Promise.race([work, stop.promise]);
      return outcome === 'stopped' ? { exitCode: 1, stopped: true, error: 'redis step stopped' } : outcome;
    } catch (caught) {
      if (ctx.signal.aborted) return { exitCode: 1, stopped: true, error: 'redis step stopped' };
      const error = toError(caught);
      return failWith(ctx.stderr, 'redis', error.message === 'Connection is closed.' && lastError !== undefined ? `${error.message} ${lastError.message}` : error.message);
    } finally {
      stop.dispose();
      client.disconnect();
    }
  },
};
