import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { z } from 'zod';
import type { StepExecutionContext, StepExecutionResult, StepExecutor } from './types.js';

/**
 * jq compiled to WebAssembly runs synchronously and copies its input and output byte by byte
 * (quadratic: a 200 KB document takes seconds), so it runs in a worker thread: the host stays
 * responsive and a stopped step terminates its worker. A worker loads the module once and is
 * kept for later steps.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const jq = require(workerData.jqPath);
parentPort.on('message', (req) => {
  jq.raw(req.input, req.filter, req.flags).then(
    (output) => parentPort.postMessage({ output }),
    (error) => parentPort.postMessage({ error: error instanceof Error ? error.message : String(error) }),
  );
});
`;
const MAX_IDLE_WORKERS = 2;

// `raw` may arrive as "true" after `${VAR}` expansion.
const configSchema = z.object({ raw: z.union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')]).optional() });

interface JqRequest {
  input: string;
  filter: string;
  flags: string[];
}
type JqReply = { output: string } | { error: string } | { stopped: true };

let jqPath: string | undefined;
const idle: Worker[] = [];

function spawnWorker(): Worker {
  jqPath ??= createRequire(import.meta.url).resolve('jq-wasm');
  // No inherited --import hooks: the worker runs plain CommonJS.
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { jqPath }, execArgv: [] });
  worker.on('error', () => undefined); // an idle worker's crash only ends it: 'exit' follows
  worker.on('exit', () => {
    const at = idle.indexOf(worker);
    if (at >= 0) idle.splice(at, 1);
  });
  return worker;
}

function release(worker: Worker): void {
  if (idle.length >= MAX_IDLE_WORKERS) {
    void worker.terminate();
    return;
  }
  worker.unref(); // an idle worker must not keep the process alive
  idle.push(worker);
}

function runInWorker(request: JqRequest, signal: AbortSignal): Promise<JqReply> {
  if (signal.aborted) return Promise.resolve({ stopped: true });
  const worker = idle.pop() ?? spawnWorker();
  worker.ref();
  return new Promise((resolve) => {
    const settle = (reply: JqReply, reusable: boolean): void => {
      worker.off('message', onMessage).off('error', onError).off('exit', onExit);
      signal.removeEventListener('abort', onAbort);
      if (reusable) release(worker);
      else void worker.terminate();
      resolve(reply);
    };
    const onMessage = (reply: { output: string } | { error: string }): void => settle(reply, true);
    const onError = (error: Error): void => settle({ error: `jq failed: ${error.message}` }, false);
    const onExit = (code: number): void => settle({ error: `jq exited unexpectedly (code ${code})` }, false);
    const onAbort = (): void => settle({ stopped: true }, false);
    worker.on('message', onMessage).on('error', onError).on('exit', onExit);
    signal.addEventListener('abort', onAbort, { once: true });
    worker.postMessage(request);
  });
}

/**
 * jq-wasm drops an error raised after the first result, and trims the output. So the program
 * collects every result before printing any (an error then leaves no output and is reported),
 * and frames them with a `0` line on each side that survives trimming.
 */
function framedProgram(filter: string): string {
  // `inputs` under -n runs the filter once per JSON document, as jq does; the newline ends a trailing comment.
  return `[inputs | (${filter}\n)] | (0, .[], 0)`;
}

function unframe(output: string): string {
  if (output === '' || output === '0\n0') return ''; // no results, or `halt`
  if (output.startsWith('0\n') && output.endsWith('\n0')) return `${output.slice(2, -2)}\n`;
  return `${output}\n`;
}

/** jq's own words, with the input named as the jq CLI names it. */
function jqMessage(error: string): string {
  return error.trim().replaceAll('/dev/stdin', '<stdin>');
}

/** The framed program's compile errors point into the frame; compiling the bare filter alone (no input, so nothing runs) gives jq's message about what the user wrote. */
async function compileError(filter: string, signal: AbortSignal): Promise<string | undefined> {
  const reply = await runInWorker({ input: '', filter, flags: [] }, signal);
  return 'error' in reply ? reply.error : undefined;
}

/** The whole message goes to the log; the step error is its first line, plus the quoted filter line a compile error ends it with. */
function failure(ctx: StepExecutionContext, message: string): StepExecutionResult {
  ctx.stderr.write(`${message}\n`);
  const [first = message, second] = message.split('\n');
  return { exitCode: 1, error: first.endsWith(':') && second !== undefined ? `${first} ${second.trim()}` : first };
}

/** `type: jq`: the command is the filter, `script` the JSON input, `config.raw` is jq's -r. */
export const jqExecutor: StepExecutor = {
  type: 'jq',
  async run(ctx) {
    const filter = ctx.step.commands[0];
    const input = ctx.step.script;
    if (filter === undefined || filter.trim() === '') return failure(ctx, 'jq step needs a filter as its command');
    if (input === undefined) return failure(ctx, 'jq step needs its JSON input in script');
    const config = configSchema.safeParse(ctx.step.config);
    if (!config.success) return failure(ctx, `invalid jq config: ${config.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
    const flags = config.data.raw === true ? ['-n', '-r'] : ['-n'];
    try {
      const reply = await runInWorker({ input, filter: framedProgram(filter), flags }, ctx.signal);
      if ('stopped' in reply) return { exitCode: 1, stopped: true, error: 'jq stopped' };
      if ('output' in reply) {
        const text = unframe(reply.output);
        if (text !== '') ctx.stdout.write(text);
        return { exitCode: 0 };
      }
      const bare = reply.error.includes('compile error') ? await compileError(filter, ctx.signal) : undefined;
      return failure(ctx, jqMessage(bare ?? reply.error));
    } catch (caught) {
      return failure(ctx, `jq failed: ${caught instanceof Error ? caught.message : String(caught)}`);
    }
  },
};
