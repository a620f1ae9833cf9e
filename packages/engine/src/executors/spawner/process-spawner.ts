import { fork, type ChildProcess } from 'node:child_process';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { toError } from '@trellis/core';
import { runInProcessGroup, signalGroup, type DirectLogFiles, type GroupSpawnOptions, type ProcessLauncher, type SpawnedResult } from '../process-group.js';
import type { FromSpawner, ToSpawner } from './protocol.js';

const HERE = fileURLToPath(import.meta.url);
/** spawner-main next to this file: `.js` when built, `.ts` when run from source. */
const ENTRY = join(dirname(HERE), `spawner-main${extname(HERE)}`);
/**
 * The spawner holds a few hundred small records at most; a small heap keeps its forks cheap.
 * Its JavaScript is a message handler around spawn(): without TurboFan it spends the same CPU
 * per step (200 spawns: 1.2-1.34 s against 1.31-1.34 s) and holds 3.7 MB less once it is busy.
 */
const HEAP_FLAGS = ['--max-semi-space-size=1', '--max-old-space-size=64', '--no-turbofan'];
/** A spawner that dies this often in a row before starting any step cannot work here. */
const FAILED_STARTS_LIMIT = 3;

/** The parent's module loader flags (`--import tsx`, `--conditions=source`): needed to load the entry from source. */
function loaderFlags(execArgv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < execArgv.length; i += 1) {
    const arg = execArgv[i] ?? '';
    if (/^--(import|loader|experimental-loader|conditions)=/.test(arg)) out.push(arg);
    else if (/^--(import|loader|experimental-loader|conditions|require)$/.test(arg) && i + 1 < execArgv.length) out.push(arg, execArgv[(i += 1)] ?? '');
  }
  return out;
}

interface Pending {
  resolve: (result: SpawnedResult) => void;
  onStart?: (pid: number) => void;
  pid?: number;
}

/**
 * Starts step processes from a small spawner process instead of this one. A fork copies the
 * forking process's page tables, so its cost grows with memory: about 2.5 ms for a worker
 * daemon of 130 MB, against a fraction of that for the spawner, and the work leaves the
 * daemon's event loop. Only steps that write straight to their log files go there; a step
 * whose output Node must read (capture, masking) is spawned here, through pipes.
 *
 * The spawner starts on first use and again after a crash; a crash fails the steps it was
 * running and kills their process groups, which nobody could watch any more. If this
 * process dies, the spawner kills the steps and exits.
 */
export class ProcessSpawner {
  private child: ChildProcess | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private closed = false;
  /** Spawners in a row that exited before starting a step; at the limit, steps are spawned here. */
  private failedStarts = 0;
  private startedAny = false;

  private readonly onCrash: (message: string) => void;
  private readonly entry: string;

  /** `onCrash` hears of a spawner that died; `entry` replaces the spawner script (tests). */
  constructor(options: { onCrash?: (message: string) => void; entry?: string } = {}) {
    this.onCrash = options.onCrash ?? (() => undefined);
    this.entry = options.entry ?? ENTRY;
  }

  readonly launch: ProcessLauncher = (options) =>
    options.files === undefined || this.closed || this.failedStarts >= FAILED_STARTS_LIMIT ? runInProcessGroup(options) : this.runThere(options, options.files);

  /** Disconnects the spawner, which exits; call when no step is running any more. */
  async close(): Promise<void> {
    this.closed = true;
    const child = this.child;
    if (child === undefined) return;
    // A spawner that never started (or already ended) will not emit 'exit' again.
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) {
      this.child = undefined;
      return;
    }
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    if (child.connected) child.disconnect();
    await exited;
  }

  private runThere(options: GroupSpawnOptions, files: DirectLogFiles): Promise<SpawnedResult> {
    let child: ChildProcess;
    try {
      child = this.helper();
    } catch (error) {
      // fork() itself threw (ENOMEM, say): nothing started, so this step may run from here.
      this.onCrash(`the process spawner could not be started (${toError(error).message}); the step is spawned by this process`);
      return runInProcessGroup(options);
    }
    return new Promise((resolve) => {
      const id = (this.nextId += 1);
      const stop = (): void => this.send({ t: 'stop', id });
      this.pending.set(id, {
        resolve: (result) => {
          options.signal.removeEventListener('abort', stop);
          resolve(result);
        },
        ...(options.onStart !== undefined ? { onStart: options.onStart } : {}),
      });
      if (this.pending.size === 1) child.channel?.ref();
      this.send({
        t: 'spawn',
        id,
        argv: options.argv,
        env: options.env,
        cwd: options.cwd,
        stdoutPath: files.stdoutPath,
        stderrPath: files.stderrPath,
        stopSignal: options.stopSignal,
        killAfterMs: options.killAfterMs,
      });
      if (options.signal.aborted) stop();
      else options.signal.addEventListener('abort', stop, { once: true });
    });
  }

  private send(message: ToSpawner): void {
    // A closed channel means the spawner is exiting: its exit handler settles every pending step.
    if (this.child?.connected === true) this.child.send(message);
  }

  private helper(): ChildProcess {
    if (this.child !== undefined) return this.child;
    this.startedAny = false;
    const child = fork(this.entry, [], { execArgv: [...loaderFlags(process.execArgv), ...HEAP_FLAGS], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.on('message', (message: FromSpawner) => this.receive(message));
    // A fork that never started (EAGAIN at a process limit, EMFILE, a missing binary) emits
    // 'error' and no 'exit': it is lost all the same, or its steps would wait forever.
    child.on('error', (error) => (child.pid === undefined ? this.lost(child, `could not be started (${error.message})`) : this.onCrash(`process spawner: ${error.message}`)));
    child.once('exit', (code, signal) => this.lost(child, signal !== null ? `was killed by ${signal}` : `exited with code ${code ?? 'unknown'}`));
    this.child = child;
    return child;
  }

  private receive(message: FromSpawner): void {
    this.startedAny = true;
    this.failedStarts = 0;
    const pending = this.pending.get(message.id);
    if (pending === undefined) return;
    if (message.t === 'started') {
      pending.pid = message.pid;
      pending.onStart?.(message.pid);
      return;
    }
    this.settle(message.id, pending, message.result);
  }

  private settle(id: number, pending: Pending, result: SpawnedResult): void {
    this.pending.delete(id);
    // Idle, the channel must not keep this process alive.
    if (this.pending.size === 0) this.child?.channel?.unref();
    pending.resolve(result);
  }

  /** The spawner is gone (`how` says why); each spawner is lost once, and its steps with it. */
  private lost(child: ChildProcess, how: string): void {
    if (this.child !== child) return;
    this.child = undefined;
    if (this.closed && this.pending.size === 0) return;
    this.onCrash(`the process spawner ${how}; ${this.pending.size} step process(es) it ran are failed and killed`);
    if (!this.startedAny && (this.failedStarts += 1) >= FAILED_STARTS_LIMIT) {
      this.onCrash(`the process spawner failed ${FAILED_STARTS_LIMIT} times before starting a step; steps are spawned by this process from now on`);
    }
    for (const [id, pending] of [...this.pending]) {
      signalGroup(pending.pid, 'SIGKILL');
      this.settle(id, pending, { exitCode: 1, signal: null, stopped: false, error: `the process spawner ${how} while the step ran` });
    }
  }
}
