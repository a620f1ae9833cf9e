import { writeFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { splitShellWords } from '@trellis/core';
import type { StepExecutionContext, StepExecutionResult, StepExecutor } from './types.js';
import { runInProcessGroup, type ProcessLauncher } from './process-group.js';

/**
 * argv for one command. A one-word shell (`sh`, `bash`) gets `-c`; a shell given with its own
 * flags (`[python3, -c]`) is used as written. Positional params follow as $1, $2 ... for POSIX shells.
 */
export function commandArgv(shell: string[], command: string, positional: string[]): string[] {
  if (shell.length === 1) return [shell[0] ?? 'sh', '-c', command, shell[0] ?? 'sh', ...positional];
  return [...shell, command];
}

/** Writes the script to a file and runs it with `interpreter` (the step's command, or its shell). */
async function runScript(ctx: StepExecutionContext, interpreter: string[], positional: string[]): Promise<StepExecutionResult> {
  const path = join(ctx.workingDir, `.trellis-script-${randomBytes(6).toString('hex')}`);
  await writeFile(path, ctx.step.script ?? '', { mode: 0o700 });
  try {
    const result = await launcherOf(ctx)({ ...spawnOptions(ctx), argv: [...interpreter, path, ...positional] });
    return toResult(result);
  } finally {
    await rm(path, { force: true });
  }
}

/** `command: python3` with a `script` names the interpreter; otherwise the shell runs it (its `-c` flags do not apply to a file). */
function interpreterOf(ctx: StepExecutionContext): string[] {
  const [command] = ctx.step.commands;
  if (ctx.step.commands.length === 1 && command !== undefined) return splitShellWords(command) ?? [command];
  return ctx.shell.filter((arg) => arg !== '-c');
}

const launcherOf = (ctx: StepExecutionContext): ProcessLauncher => ctx.launch ?? runInProcessGroup;

function spawnOptions(ctx: StepExecutionContext) {
  return {
    env: ctx.env,
    cwd: ctx.workingDir,
    stdout: ctx.stdout,
    stderr: ctx.stderr,
    ...(ctx.files !== undefined ? { files: ctx.files } : {}),
    signal: ctx.signal,
    stopSignal: ctx.stopSignal,
    killAfterMs: ctx.killAfterMs,
  };
}

function toResult(result: { exitCode: number; stopped: boolean; error?: string }): StepExecutionResult {
  const out: StepExecutionResult = { exitCode: result.exitCode };
  if (result.stopped) out.stopped = true;
  if (result.error !== undefined) out.error = result.error;
  else if (result.exitCode !== 0) out.error = `exit status ${result.exitCode}`;
  return out;
}

export const shellExecutor: StepExecutor = {
  type: 'shell',
  async run(ctx) {
    const positional = ctx.positionalParams ?? [];
    if (ctx.step.script !== undefined) return runScript(ctx, interpreterOf(ctx), positional);
    let last: StepExecutionResult = { exitCode: 0 };
    for (const command of ctx.step.commands) {
      last = toResult(await launcherOf(ctx)({ ...spawnOptions(ctx), argv: commandArgv(ctx.shell, command, positional) }));
      if (last.exitCode !== 0 || last.stopped === true) return last;
    }
    return last;
  },
};
