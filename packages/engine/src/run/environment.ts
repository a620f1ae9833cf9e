import { readFile } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
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

/** KEY=value lines; `#` comments, `export ` prefixes and surrounding quotes are understood. */
export function parseDotenv(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim().replace(/^export\s+/, '');
    if (line === '' || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    if (eq <= 0) continue;
    const key = line.slice(0, eq).trim();
    let value = line.slice(eq + 1).trim();
    if ((value.startsWith('"') && value.endsWith('"')) || (value.startsWith("'") && value.endsWith("'"))) value = value.slice(1, -1);
    if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) out[key] = value;
  }
  return out;
}

/** Loads the DAG's dotenv files; a missing file is normal (the default `.env` rarely exists). */
export async function loadDotenv(files: string[], baseDir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const file of files) {
    const path = isAbsolute(file) ? file : join(baseDir, file);
    try {
      Object.assign(out, parseDotenv(await readFile(path, 'utf8')));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`dotenv ${path}: ${(error as Error).message}`);
    }
  }
  return out;
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
