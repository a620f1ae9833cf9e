// The real `trellis` entry point, run from its TypeScript sources in a process of its own.
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';

const MAIN = resolve(import.meta.dirname, '../../src/main.ts');

export interface Finished {
  code: number;
  out: string;
  err: string;
}

export interface Running {
  child: ChildProcess;
  /** What it has written to stdout so far. */
  out: () => string;
  finished: Promise<Finished>;
}

export function spawnTrellis(cwd: string, args: string[]): Running {
  // Each test names its coordinator with --server; one from the caller's environment must not answer instead.
  const { SVC_SERVER_URL: _ignored, ...env } = process.env;
  const child = spawn(process.execPath, ['--conditions=source', '--import', import.meta.resolve('tsx'), MAIN, ...args], { cwd, env });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const finished = new Promise<Finished>((done) => child.on('close', (code) => done({ code: code ?? 1, out, err })));
  return { child, out: () => out, finished };
}

export function trellis(cwd: string, ...args: string[]): Promise<Finished> {
  return spawnTrellis(cwd, args).finished;
}

/** Resolves once `check` holds for the output, polling; rejects after `ms`. */
export async function waitFor(what: string, check: () => boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
