import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { groupHasLiveMember } from './group-members.js';

export interface SpawnedResult {
  exitCode: number;
  signal: NodeJS.Signals | null;
  stopped: boolean;
  error?: string;
}

/**
 * Log files a process writes to directly instead of through pipes; merged output names one file
 * twice. The process that spawns the step creates and opens them: with a spawner process, that
 * file system work (two inode creations a step, hundreds of microseconds each on a slow disk)
 * leaves its parent's event loop.
 */
export interface DirectLogFiles {
  stdoutPath: string;
  stderrPath: string;
}

export interface GroupSpawnOptions {
  argv: string[];
  env: Record<string, string>;
  cwd: string;
  /** Receive the output when no `files` are given. */
  stdout: Writable;
  stderr: Writable;
  files?: DirectLogFiles;
  signal: AbortSignal;
  stopSignal: NodeJS.Signals;
  killAfterMs: number;
  /** Told the process id once the process exists. */
  onStart?: (pid: number) => void;
}

/** Runs one step process in a process group of its own: in this process, or in a spawner process. */
export type ProcessLauncher = (options: GroupSpawnOptions) => Promise<SpawnedResult>;

/** Sends `signal` to a step's process group (its pid is the group's id); a group already gone is fine. */
export function signalGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

/**
 * Runs one process in a process group of its own, so stopping it reaches every process it
 * started. On stop: `stopSignal` to the group, SIGKILL after `killAfterMs`. When the main
 * process exits, whatever it left running in its group is killed too: a step never leaves
 * orphans behind, whether it finished, failed or was stopped.
 */
export function runInProcessGroup(options: GroupSpawnOptions): Promise<SpawnedResult> {
  return new Promise((resolve) => {
    const [command, ...args] = options.argv;
    let fds: LogFds | undefined;
    try {
      fds = options.files !== undefined ? openLogs(options.files) : undefined;
    } catch (error) {
      resolve({ exitCode: 1, signal: null, stopped: false, error: `cannot open the step's log files: ${messageOf(error)}` });
      return;
    }
    let child: ChildProcess;
    try {
      child = spawn(command ?? 'sh', args, { cwd: options.cwd, env: options.env, detached: true, stdio: ['ignore', fds?.out ?? 'pipe', fds?.err ?? 'pipe'] });
    } catch (error) {
      resolve({ exitCode: 127, signal: null, stopped: false, error: messageOf(error) });
      return;
    } finally {
      // The child holds its own copies once spawn returns (or nothing was started).
      if (fds !== undefined) closeLogs(fds);
    }
    if (child.pid !== undefined) options.onStart?.(child.pid);
    let stopped = false;
    let killTimer: NodeJS.Timeout | undefined;
    let spawnError: string | undefined;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;

    const onAbort = (): void => {
      stopped = true;
      signalGroup(child.pid, options.stopSignal);
      killTimer = setTimeout(() => signalGroup(child.pid, 'SIGKILL'), options.killAfterMs);
      killTimer.unref();
    };
    if (options.signal.aborted) onAbort();
    else options.signal.addEventListener('abort', onAbort, { once: true });

    child.stdout?.pipe(options.stdout, { end: false });
    child.stderr?.pipe(options.stderr, { end: false });
    child.on('error', (error) => {
      spawnError = error.message;
    });
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      // Leftover background processes would hold the pipes open and outlive the step.
      signalGroup(child.pid, 'SIGKILL');
    });
    child.on('close', (code, signal) => {
      clearTimeout(killTimer);
      options.signal.removeEventListener('abort', onAbort);
      const final = exit ?? { code, signal };
      const exitCode = final.code ?? (final.signal !== null ? 128 + signalNumber(final.signal) : 1);
      const result: SpawnedResult = { exitCode: spawnError !== undefined && final.code === null ? 127 : exitCode, signal: final.signal, stopped };
      if (spawnError !== undefined) result.error = spawnError;
      void groupGone(child.pid).then(() => resolve(result));
    });
  });
}

interface LogFds {
  out: number;
  err: number;
}

function openLogs(files: DirectLogFiles): LogFds {
  const out = openSync(files.stdoutPath, 'a');
  try {
    return { out, err: files.stderrPath === files.stdoutPath ? out : openSync(files.stderrPath, 'a') };
  } catch (error) {
    closeSync(out);
    throw error;
  }
}

function closeLogs(fds: LogFds): void {
  closeSync(fds.out);
  if (fds.err !== fds.out) closeSync(fds.err);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** How long a step's end waits for the rest of its killed group to be gone (a loaded host is slow to schedule them). */
const GROUP_GONE_WAIT_MS = 2000;

/**
 * Resolves once no process of the group is left running: the SIGKILL sent on exit is delivered
 * asynchronously, and a step is not over while its background processes still run. Immediate
 * when the group was empty (the usual case: one kill(0) probe).
 */
async function groupGone(pid: number | undefined): Promise<void> {
  if (pid === undefined) return;
  const deadline = Date.now() + GROUP_GONE_WAIT_MS;
  while (Date.now() < deadline && (await groupHasLiveMember(pid))) await new Promise((r) => setTimeout(r, 5));
}

const SIGNAL_NUMBERS: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGUSR1: 10, SIGUSR2: 12, SIGTERM: 15 };

function signalNumber(signal: NodeJS.Signals): number {
  return SIGNAL_NUMBERS[signal] ?? 0;
}
