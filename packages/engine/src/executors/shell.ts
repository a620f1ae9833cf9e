import { writeFile, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { splitShellWords, type Step } from '@trellis/core';
import type { StepExecutionContext, StepExecutionResult, StepExecutor } from './types.js';
import { runInProcessGroup, type ProcessLauncher } from './process-group.js';

/** Programs that parse `${NAME}` as a POSIX shell does: references in their text become variables. */
const POSIX_SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'busybox']);

export function isPosixShell(program: string | undefined): boolean {
  return program !== undefined && POSIX_SHELLS.has(basename(program));
}

/**
 * Which of a shell step's texts a POSIX shell parses: its commands when the step's shell is one,
 * its script when the program that runs it is one (the step's command names an interpreter, or
 * the shell runs it).
 */
export function shellParsedTexts(step: Step, shell: string[]): { commands: boolean; script: boolean } {
  const viaShell = isPosixShell(shell[0]);
  if (step.script === undefined) return { commands: viaShell, script: false };
  const [command] = step.commands;
  const interpreter = step.commands.length === 1 && command !== undefined ? (splitShellWords(command) ?? [command])[0] : shell[0];
  return { commands: false, script: isPosixShell(interpreter) };
}

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
