import { raw as runJq } from 'jq-wasm';
import type { StepExecutor } from './types.js';

/**
 * `type: jq`: the command is the filter, `script` the JSON input, `config.raw` is jq's -r.
 * jq itself (compiled to WebAssembly) runs the filter, so the semantics are jq's.
 */
export const jqExecutor: StepExecutor = {
  type: 'jq',
  async run(ctx) {
    const filter = ctx.step.commands[0] ?? '.';
    const input = ctx.step.script ?? 'null';
    const flags = ctx.step.config.raw === true ? ['-r'] : [];
    try {
      const output = await runJq(input, filter, flags);
      if (output !== '') ctx.stdout.write(output.endsWith('\n') ? output : `${output}\n`);
      return { exitCode: 0 };
    } catch (error) {
      const message = (error as Error).message.trim();
      ctx.stderr.write(`${message}\n`);
      return { exitCode: 1, error: message.split('\n')[0] ?? message };
    }
  },
};
