import type { StepType } from '@trellis/core';
import type { StepExecutor } from './types.js';
import { shellExecutor } from './shell.js';
import { httpExecutor } from './http.js';
import { jqExecutor } from './jq.js';
import { archiveExecutor } from './archive.js';

/** One module per step type; a type without a module fails its step with a clear message. */
const executors = new Map<StepType, StepExecutor>([shellExecutor, httpExecutor, jqExecutor, archiveExecutor].map((e) => [e.type, e]));

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
  return executors.get(type) ?? unavailable(type);
}
