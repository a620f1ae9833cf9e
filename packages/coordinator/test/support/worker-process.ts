// A real worker daemon for coordinator tests: `trellis worker` from the built CLI in a process
// of its own, as the cluster tests (test-e2e) start it, stopped by its PID. Build first
// (`npm run build`): the worker runs the compiled code.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

const CLI = resolve(import.meta.dirname, '..', '..', '..', 'cli', 'dist', 'main.js');

export interface WorkerProcess {
  readonly id: string;
  /** Where its runs keep their files while they run (DAG_RUN_WORK_DIR lies under it). */
  readonly workDir: string;
  readonly child: ChildProcess;
  /** Everything it printed, for failure messages. */
  output(): string;
  /** SIGTERM, then SIGKILL if it has not exited within 15 s; resolves once it has exited. */
  stop(): Promise<void>;
}

export function startWorkerProcess(grpcAddress: string, id: string, labels: string, dir: string, pollers = 4, logLevel = 'warn'): WorkerProcess {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` before these tests`);
  const workDir = join(dir, `work-${id}`);
  const args = ['worker', '--coordinator', grpcAddress, '--id', id, '--labels', labels, '--pollers', String(pollers), '--work-dir', workDir, '--shutdown-grace-sec', '1', '--log-level', logLevel];
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return {
    id,
    workDir,
    child,
    output: () => out,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
