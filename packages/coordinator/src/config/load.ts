import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { existsSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { BadRequestError, toError } from '@trellis/core';
import { ENV_KEYS, secretKeySchema, serverConfigSchema, type AuthConfig, type ParsedServerConfig, type RawServerConfig } from './schema.js';

/** The auth section with its `*File` settings read: secrets are in memory, never re-read. */
export type ResolvedAuthConfig = Omit<AuthConfig, 'basicPasswordFile' | 'licensePublicKeyFile' | 'licenseFile'>;

/** The secret store's key-encryption keys as configured (base64), the key file read. */
export interface SecretKeysConfig {
  /** Seals new values; absent: none configured. */
  current?: string;
  /** Still open older values. */
  previous: string[];
}

/** Resolved configuration: paths absolute, derived defaults filled in. */
export interface ServerConfig extends Omit<ParsedServerConfig, 'auth' | 'secretsKey' | 'secretsKeyFile' | 'secretsPreviousKeys'> {
  auth: ResolvedAuthConfig;
  secretKeys: SecretKeysConfig;
  logDir: string;
  docsDir: string;
  uiDir: string;
  baseConfig?: string;
  /** The config file it came from, if any. */
  configFile?: string;
}

export class ConfigError extends BadRequestError {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
}

export interface LoadConfigOptions {
  /** YAML file; missing file is an error only when given explicitly. */
  file?: string;
  env?: NodeJS.ProcessEnv;
  /** Command-line flags: win over env, which wins over the file. */
  overrides?: Partial<RawServerConfig>;
  cwd?: string;
}

function readFileConfig(file: string, problems: string[]): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    problems.push(`config file ${file}: ${toError(error).message}`);
    return {};
  }
  try {
    const value: unknown = parseYaml(text);
    if (value === null || value === undefined) return {};
    if (typeof value !== 'object' || Array.isArray(value)) {
      problems.push(`config file ${file}: must be a YAML mapping`);
      return {};
    }
    return value as Record<string, unknown>;
  } catch (error) {
    problems.push(`config file ${file}: ${toError(error).message}`);
    return {};
  }
}

const BOOLEANS = new Map([['true', true], ['false', false], ['1', true], ['0', false], ['yes', true], ['no', false], ['on', true], ['off', false]]);

/** Sets `a` or `auth.a`: sections are one level deep. */
function setKey(out: Record<string, unknown>, key: string, value: unknown): void {
  const [section, inner] = key.split('.');
  if (section === undefined || inner === undefined) out[key] = value;
  else out[section] = { ...(out[section] as Record<string, unknown> | undefined), [inner]: value };
}

function readEnvConfig(env: NodeJS.ProcessEnv, problems: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  // DATABASE_URL first so SVC_DATABASE_URL, more specific, wins.
  const names = Object.keys(ENV_KEYS).sort((a, b) => (a === 'DATABASE_URL' ? -1 : b === 'DATABASE_URL' ? 1 : 0));
  for (const name of names) {
    const raw = env[name];
    const spec = ENV_KEYS[name];
    if (raw === undefined || raw === '' || spec === undefined) continue;
    if (spec.kind === 'int') {
      if (!/^-?\d+$/.test(raw.trim())) problems.push(`${name}: must be an integer, got "${raw}"`);
      else setKey(out, spec.key, Number(raw.trim()));
    } else if (spec.kind === 'bool') {
      const value = BOOLEANS.get(raw.trim().toLowerCase());
      if (value === undefined) problems.push(`${name}: must be true or false, got "${raw}"`);
      else setKey(out, spec.key, value);
    } else if (spec.kind === 'list') {
      setKey(out, spec.key, raw.split(',').map((s) => s.trim()).filter((s) => s.length > 0));
    } else {
      setKey(out, spec.key, raw);
    }
  }
  return out;
}

/** Later sources win key by key, inside the `auth` section too. */
function mergeSources(...sources: Array<Record<string, unknown>>): Record<string, unknown> {
  const merged: Record<string, unknown> = {};
  for (const source of sources) {
    for (const [key, value] of Object.entries(source)) {
      const known = merged[key];
      const bothSections = key === 'auth' && typeof value === 'object' && value !== null && typeof known === 'object' && known !== null;
      merged[key] = bothSections ? { ...known, ...value } : value;
    }
  }
  return merged;
}

function readSecretFile(key: string, file: string, cwd: string, problems: string[]): string | undefined {
  try {
    return readFileSync(resolve(cwd, file), 'utf8').trim();
  } catch (error) {
    problems.push(`auth.${key}: ${toError(error).message}`);
    return undefined;
  }
}

/** Reads the secrets the auth section names by file, once. */
function resolveAuth(auth: AuthConfig, cwd: string, problems: string[]): ResolvedAuthConfig {
  const { basicPasswordFile, licensePublicKeyFile, licenseFile, ...rest } = auth;
  const out: ResolvedAuthConfig = { ...rest };
  if (basicPasswordFile !== undefined) {
    const password = readSecretFile('basicPasswordFile', basicPasswordFile, cwd, problems)?.split('\n')[0];
    if (password !== undefined) out.basicPassword = password;
  }
  const publicKey = licensePublicKeyFile !== undefined ? readSecretFile('licensePublicKeyFile', licensePublicKeyFile, cwd, problems) : undefined;
  if (publicKey !== undefined) out.licensePublicKey = publicKey;
  const license = licenseFile !== undefined ? readSecretFile('licenseFile', licenseFile, cwd, problems) : undefined;
  if (license !== undefined) out.license = license;
  return out;
}

/** The keys from `secretsKey` or `secretsKeyFile` (not both), plus `secretsPreviousKeys`; read once. */
function resolveSecretKeys(value: ParsedServerConfig, cwd: string, problems: string[]): SecretKeysConfig {
  const { secretsKey, secretsKeyFile, secretsPreviousKeys } = value;
  if (secretsKey !== undefined && secretsKeyFile !== undefined) {
    problems.push('secretsKey: set either secretsKey (SVC_SECRETS_KEY) or secretsKeyFile (SVC_SECRETS_KEY_FILE), not both');
    return { previous: secretsPreviousKeys };
  }
  if (secretsKeyFile === undefined) return { ...(secretsKey !== undefined ? { current: secretsKey } : {}), previous: secretsPreviousKeys };
  let lines: string[];
  try {
    lines = readFileSync(resolve(cwd, secretsKeyFile), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l !== '');
  } catch (error) {
    problems.push(`secretsKeyFile: ${toError(error).message}`);
    return { previous: secretsPreviousKeys };
  }
  // Never echo a line of the file: it is a key.
  lines.forEach((line, i) => {
    if (!secretKeySchema.safeParse(line).success) problems.push(`secretsKeyFile: line ${i + 1} is not 32 bytes in base64`);
  });
  const [current, ...previous] = lines;
  if (current === undefined) problems.push('secretsKeyFile: the file holds no key');
  return { ...(current !== undefined ? { current } : {}), previous: [...previous, ...secretsPreviousKeys] };
}

/** The UI package's build output beside this package (dist/config or src/config -> packages/ui/dist). */
const BUNDLED_UI_DIR = resolve(import.meta.dirname, '..', '..', '..', 'ui', 'dist');

/** Loads and validates the configuration once, at start-up; throws ConfigError listing every problem. */
export function loadServerConfig(options: LoadConfigOptions = {}): ServerConfig {
  const cwd = options.cwd ?? process.cwd();
  const problems: string[] = [];
  const file = options.file !== undefined ? resolve(cwd, options.file) : undefined;
  const fromFile = file !== undefined ? readFileConfig(file, problems) : {};
  const fromEnv = readEnvConfig(options.env ?? {}, problems);
  const defined = Object.fromEntries(Object.entries(options.overrides ?? {}).filter(([, v]) => v !== undefined));
  const parsed = serverConfigSchema.safeParse(mergeSources(fromFile, fromEnv, defined));
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const key = issue.path.map(String).join('.') || '(root)';
      problems.push(`${key}: ${issue.message}`);
    }
  }
  if (problems.length > 0 || !parsed.success) throw new ConfigError(problems);
  const value = parsed.data;
  const auth = resolveAuth(value.auth, cwd, problems);
  const secretKeys = resolveSecretKeys(value, cwd, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  const { secretsKey: _key, secretsKeyFile: _file, secretsPreviousKeys: _previous, ...rest } = value;
  const dataDir = resolve(cwd, value.dataDir);
  const baseBeside = file !== undefined ? join(dirname(file), 'base.yaml') : undefined;
  const baseConfig = value.baseConfig !== undefined ? resolve(cwd, value.baseConfig) : baseBeside !== undefined && existsSync(baseBeside) ? baseBeside : undefined;
  return {
    ...rest,
    auth,
    secretKeys,
    dataDir,
    dagsDir: resolve(cwd, value.dagsDir),
    logDir: resolve(cwd, value.logDir ?? join(dataDir, 'logs')),
    docsDir: value.docsDir === '' ? '' : resolve(cwd, value.docsDir ?? join(dataDir, 'docs')),
    uiDir: value.uiDir !== undefined ? resolve(cwd, value.uiDir) : BUNDLED_UI_DIR,
    ...(baseConfig !== undefined ? { baseConfig } : {}),
    ...(file !== undefined ? { configFile: file } : {}),
  };
}
