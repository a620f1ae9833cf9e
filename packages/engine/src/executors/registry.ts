import type { StepType } from '@trellis/core';
import type { StepExecutor } from './types.js';
import { shellExecutor } from './shell.js';

/**
 * One module per step type; a type without a module fails its step with a clear message.
 * Only the shell executor is loaded up front: the others pull in sizeable libraries (an HTTP
 * client, jq compiled to WebAssembly, archive codecs, mail, Redis and S3 clients) that a host running shell steps would
 * otherwise keep in memory, and every fork of that host copies its page tables.
 */
const loaders = new Map<StepType, () => Promise<StepExecutor>>([
  ['http', async () => (await import('./http.js')).httpExecutor],
  ['jq', async () => (await import('./jq.js')).jqExecutor],
  ['archive', async () => (await import('./archive.js')).archiveExecutor],
  ['mail', async () => (await import('./mail.js')).mailExecutor],
  ['redis', async () => (await import('./redis.js')).redisExecutor],
  ['s3', async () => (await import('./s3.js')).s3Executor],
  ['ssh', async () => (await import('./ssh.js')).sshExecutor],
  ['docker', async () => (await import('./docker.js')).dockerExecutor],
]);

function unavailable(type: StepType): StepExecutor {
  return {
    type,
    run: (ctx) => {
      ctx.stderr.write(`step type "${type}" is not available in this build\n`);
      return Promise.resolve({ exitCode: 1, error: `step type "${type}" is not available in this build` });
    },
  };
}

export function executorFor(type: StepType): StepExecutor {
  if (type === 'shell') return shellExecutor;
  const load = loaders.get(type);
  if (load === undefined) return unavailable(type);
  return { type, run: async (ctx) => (await load()).run(ctx) };
}
