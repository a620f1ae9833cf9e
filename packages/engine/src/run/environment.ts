import { readFile } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { parse } from 'dotenv';
import type { SecretRef } from '@trellis/core';

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
    const text = isAbsolute(file) ? await readFirst([file]) : (read[file] ?? (await readFirst(dirs.map((dir) => join(dir, file)))));
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
    if (isAbsolute(file)) continue;
    const text = await readFirst([join(dir, file)]).catch(() => undefined);
    if (text !== undefined) out[file] = text;
  }
  return out;
}

/** The first of `paths` that exists; none is normal (the default `.env` rarely exists). */
async function readFirst(paths: string[]): Promise<string | undefined> {
  for (const path of paths) {
    try {
      return await readFile(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`dotenv ${path}: ${(error as Error).message}`);
    }
  }
  return undefined;
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
        throw new Error(`secret ${ref.name}: cannot read ${path}: ${(error as Error).message}`);
      }
    }
  }
  return out;
}
