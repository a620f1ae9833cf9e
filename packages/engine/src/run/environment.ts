import { statSync } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { parse } from 'dotenv';
import { relativeUnder, type SecretRef, toError } from '@trellis/core';

/** Larger than any real dotenv file: a bound on what one entry (`/dev/zero`, a log) can make a host read. */
export const MAX_DOTENV_BYTES = 1024 * 1024;

/** The host variables a step may see, by the contract; everything else is filtered out. */
const ALLOWED = new Set([
  'PATH', 'HOME', 'USER', 'SHELL', 'TMPDIR', 'TERM', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ',
  // container clients
  'DOCKER_HOST', 'DOCKER_CERT_PATH', 'DOCKER_TLS_VERIFY', 'DOCKER_CONFIG', 'CONTAINER_HOST',
]);
const PREFIXES = ['DAG_', 'LC_', 'SVC_', 'KUBERNETES_'];

export function filterHostEnv(host: NodeJS.ProcessEnv, passthrough: string[] = [], passthroughPrefixes: string[] = []): Record<string, string> {
  const names = new Set([...ALLOWED, ...passthrough]);
  const prefixes = [...PREFIXES, ...passthroughPrefixes];
  const out: Record<string, string> = {};
  // Keys first: reading every value of process.env crosses into C++ once per variable.
  for (const key of Object.keys(host)) {
    if (!names.has(key) && !prefixes.some((p) => key.startsWith(p))) continue;
    const value = host[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}

/**
 * Reads the DAG's dotenv files, later files overriding earlier ones, with the `dotenv` package's
 * parser. A relative entry is the text a host read for it already, or the first of `dirs` that has it.
 */
export async function loadDotenv(files: string[], dirs: string[], read: Record<string, string> = {}): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const file of files) {
    const text = isAbsolute(file) ? await readFirst([file]) : (read[file] ?? (await readFirst(dirs.map((dir) => insideOf(dir, file)))));
    if (text !== undefined) Object.assign(out, parse(text));
  }
  return out;
}

/**
 * The text of each relative dotenv entry found in `dir` (the DAG file's folder), for a host that
 * runs the DAG elsewhere. One it cannot read is left out: the run then looks for it in its working
 * directory, as for a file that is not there, rather than the hand-out of the run failing.
 */
export async function readDotenvFiles(files: string[], dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const file of files) {
    if (isAbsolute(file) || relativeUnder(dir, join(dir, file)) === undefined) continue;
    const text = await readFirst([join(dir, file)]).catch(() => undefined);
    if (text !== undefined) out[file] = text;
  }
  return out;
}

/**
 * A relative entry joined to `dir`, refused when it climbs out of it: `../.env` beside the DAGs
 * folder is the coordinator's own file (its worker token, its database URL), not the DAG's.
 */
function insideOf(dir: string, file: string): string {
  const path = join(dir, file);
  if (relativeUnder(dir, path) === undefined) throw new Error(`dotenv ${file}: a relative path must stay inside the DAG's folder or its working directory`);
  return path;
}

/** The first of `paths` that exists; none is normal (the default `.env` rarely exists). */
async function readFirst(paths: string[]): Promise<string | undefined> {
  for (const path of paths) {
    // A stat that finds nothing makes no error object: a failed open makes one with its stack,
    // the largest cost of a 1-step run's set-up when, as usual, there is no `.env`. A file that
    // goes between the stat and the open is still the open's ENOENT below.
    if (statSync(path, { throwIfNoEntry: false }) === undefined) continue;
    try {
      return await readRegularFile(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`dotenv ${path}: ${toError(error).message}`);
    }
  }
  return undefined;
}

/** A regular file of at most MAX_DOTENV_BYTES, checked on the open handle so no swap in between is read. */
async function readRegularFile(path: string): Promise<string> {
  const handle = await open(path, 'r');
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new Error('not a regular file');
    if (info.size > MAX_DOTENV_BYTES) throw new Error(`larger than ${MAX_DOTENV_BYTES} bytes`);
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

/** Resolves `secrets:` from the host environment or files; a missing secret fails the run before any step. */
export async function resolveSecrets(refs: SecretRef[], hostEnv: NodeJS.ProcessEnv, baseDir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const ref of refs) {
    if (ref.provider === 'env') {
      const value = hostEnv[ref.key];
      if (value === undefined) throw new Error(`secret ${ref.name}: environment variable ${ref.key} is not set`);
      out[ref.name] = value;
    } else {
      const path = isAbsolute(ref.key) ? ref.key : join(baseDir, ref.key);
      try {
        out[ref.name] = (await readFile(path, (ref.options.encoding as BufferEncoding | undefined) ?? 'utf8')).replace(/\r?\n$/, '');
      } catch (error) {
        throw new Error(`secret ${ref.name}: cannot read ${path}: ${toError(error).message}`);
      }
    }
  }
  return out;
}
