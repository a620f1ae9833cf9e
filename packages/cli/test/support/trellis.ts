// The real `trellis` entry point, compiled, in a process of its own. Compiled because a test
// starts dozens of them: through tsx each start costs a second of CPU more, which doubled these
// suites' time (44 s against 24 s for packages/cli on a 2-core machine).
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

const CLI = resolve(import.meta.dirname, '../..');
const MAIN = join(CLI, 'dist', 'main.js');

/** The newest change among the TypeScript sources under `dir` (an editor's swap file is not a source). */
function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (/\.(ts|tsx|mts)$/.test(entry.name)) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * Refuses to test a build older than its sources (`npm test` builds first; a single file run
 * after an edit may not have): `tsc -b` rewrites a project's .tsbuildinfo whenever it builds it.
 * The CLI's tsconfig references every package it is built from.
 */
function assertBuilt(): void {
  const { references } = JSON.parse(readFileSync(join(CLI, 'tsconfig.json'), 'utf8')) as { references: { path: string }[] };
  for (const project of [CLI, ...references.map((r) => resolve(CLI, r.path))]) {
    const built = statSync(join(project, 'dist', '.tsbuildinfo'), { throwIfNoEntry: false })?.mtimeMs;
    if (built === undefined) throw new Error(`${project} is not built: run \`npm run build\` (the CLI tests run ${MAIN})`);
    if (newestSource(join(project, 'src')) > built) throw new Error(`${project} has changed since it was built: run \`npm run build\` (the CLI tests run ${MAIN})`);
  }
}

assertBuilt();

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
  const child = spawn(process.execPath, [MAIN, ...args], { cwd, env });
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
