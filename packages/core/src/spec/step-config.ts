import { z } from 'zod';
import type { Dag, Step, StepType } from '../model/dag.js';
import type { Issues } from './issues.js';
import { isRecord, str } from './fields.js';
import { splitShellWords } from '../params/shell-words.js';

/**
 * What the contract says the `command` and `config` of typed steps may be, checked when the
 * definition is loaded rather than when the step fails (or, for types without an executor yet,
 * never). `${...}` references are expanded when the step runs, so a value holding one is taken
 * on trust here; the executor checks it again after expansion.
 */

const REFERENCE = /\$\{[^}]*\}/;
const hasReference = (text: string): boolean => REFERENCE.test(text);

/** The value, or a string holding a reference; one message for both, naming what the value must be. */
function orReference<S extends z.ZodType>(schema: S, message: string): z.ZodType {
  return z.union([schema, z.string().regex(REFERENCE, message)], { error: message });
}

// Executors accept "true"/"false" too: that is what a `${VAR}` expands to.
const flag = orReference(z.union([z.boolean(), z.enum(['true', 'false'])]), 'must be true or false');
const nonEmpty = z.string({ error: 'must be a string' }).min(1, 'must not be empty');
const strings = z.union([str, z.array(str)], { error: 'must be a string or a list of strings' });
const scalarMap = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()], { error: 'must be a string, number or boolean' }), { error: 'must be a mapping' });

function numberIn(min: number, max: number): z.ZodType {
  const message = `must be a number from ${min.toFixed(1)} to ${max.toFixed(1)}`;
  return orReference(z.number({ error: message }).min(min, message).max(max, message), message);
}

const positiveInt = orReference(z.number().int('must be a positive integer').min(1, 'must be a positive integer'), 'must be a positive integer');

/** Hosted providers, `local`, and the three names that mean `local`. */
export const LLM_PROVIDERS = ['openai', 'anthropic', 'gemini', 'openrouter', 'local', 'ollama', 'vllm', 'llama'] as const;

const llmObject = z.strictObject({
  provider: orReference(z.enum(LLM_PROVIDERS), `must be one of ${LLM_PROVIDERS.join(', ')}`).optional(),
  model: str.optional(),
  system: str.optional(),
  temperature: numberIn(0, 2).optional(),
  max_tokens: positiveInt.optional(),
  top_p: numberIn(0, 1).optional(),
  base_url: str.optional(),
  api_key_name: str.optional(),
  stream: flag.optional(),
});

const PORT = 'must be a port number (1-65535)';
const port = orReference(z.number().int(PORT).min(1, PORT).max(65535, PORT), PORT);
const seconds = orReference(z.number().positive(), 'must be a positive number of seconds');
const address = orReference(z.string().regex(/^[^\s:]+:\d{1,5}$/), 'must be host:port');
const addresses = z.array(address, { error: 'must be a list of host:port addresses' }).min(1, 'must name at least one host:port address');

export const REDIS_MODES = ['standalone', 'sentinel', 'cluster'] as const;
/** Where a redis step connects; DAG-level `redis` holds the same fields as defaults. */
const redisConnection = {
  url: str.optional(),
  host: nonEmpty.optional(),
  port: port.optional(),
  username: str.optional(),
  password: str.optional(),
  db: orReference(z.number().int().min(0), 'must be a non-negative integer').optional(),
  mode: orReference(z.enum(REDIS_MODES), `must be one of ${REDIS_MODES.join(', ')}`).optional(),
  sentinel_master: nonEmpty.optional(),
  sentinel_addrs: addresses.optional(),
  cluster_addrs: addresses.optional(),
  tls: flag.optional(),
  tls_skip_verify: flag.optional(),
  timeout: seconds.optional(),
};
const redisObject = z.strictObject(redisConnection);
const redisArgument = z.union([z.string(), z.number(), z.boolean()], { error: 'must be a string, number or boolean' });
const redisConfig = z.strictObject({
  ...redisConnection,
  pipeline: z.array(z.union([nonEmpty, z.array(redisArgument).min(1, 'must not be empty')], { error: 'must be a command line or a list of arguments' }), { error: 'must be a list of commands' }).min(1, 'must hold at least one command').optional(),
  transaction: flag.optional(),
});

/** DAG-level `smtp`: the server mail steps and notifications go through. */
const smtpObject = z.strictObject({
  host: nonEmpty,
  port: port.optional(),
  username: str.optional(),
  password: str.optional(),
  secure: flag.optional(),
  tls_skip_verify: flag.optional(),
  timeout: seconds.optional(),
});

const httpConfig = z.strictObject({
  headers: scalarMap.optional(),
  body: z.union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())], { error: 'must be a string, a mapping or a list' }).nullish(),
  query: scalarMap.optional(),
  timeout: orReference(z.union([z.number().positive('must be a positive number of seconds'), z.string().regex(/^\d+(\.\d+)?$/)]), 'must be a positive number of seconds').optional(),
  silent: flag.optional(),
  tls_skip_verify: flag.optional(),
});

const jqConfig = z.strictObject({ raw: flag.optional() });

const ARCHIVE_FORMATS = ['tar', 'tar.gz', 'tgz', 'zip'] as const;
const archiveConfig = z.strictObject({
  source: nonEmpty.optional(),
  destination: nonEmpty.optional(),
  format: orReference(z.enum(ARCHIVE_FORMATS), `must be one of ${ARCHIVE_FORMATS.join(', ')}`).optional(),
  include: strings.optional(),
  exclude: strings.optional(),
  overwrite: flag.optional(),
});

const s3Config = z.strictObject({
  bucket: nonEmpty.optional(),
  key: str.optional(),
  prefix: str.optional(),
  source: str.optional(),
  destination: str.optional(),
  content_type: str.optional(),
  storage_class: str.optional(),
  max_keys: positiveInt.optional(),
  recursive: flag.optional(),
  region: nonEmpty.optional(),
  endpoint: orReference(z.url({ protocol: /^https?$/ }), 'must be an http or https URL').optional(),
  force_path_style: flag.optional(),
  access_key_id: str.optional(),
  secret_access_key: str.optional(),
  session_token: str.optional(),
});

export const MAIL_CONTENT_TYPES = ['text/plain', 'text/html'] as const;
const mailConfig = z.strictObject({
  to: z.union([nonEmpty, z.array(nonEmpty).min(1, 'must name at least one recipient')], { error: 'must be an address or a list of addresses' }),
  from: nonEmpty,
  subject: str.optional(),
  message: str.optional(),
  contentType: orReference(z.enum(MAIL_CONTENT_TYPES), `must be one of ${MAIL_CONTENT_TYPES.join(', ')}`).optional(),
  attachments: strings.optional(),
});

/** Where a step's fields were written: `config` may come from a legacy `executor: {config}`. */
export interface StepPaths {
  step: string;
  config: string;
}

interface TypeRule {
  config?: z.ZodType;
  /** Commands the type knows by name; absent when the command is free text (a filter, a URL). */
  commands?: readonly string[];
  /** How the single command is checked when it is free text; a message when it is wrong. */
  checkCommand?: (command: string) => string | undefined;
  /** Types whose executor runs one command: a missing one or a list is an error. */
  oneCommand?: string;
}

function httpCommandProblem(command: string): string | undefined {
  const usage = 'must be "METHOD url", e.g. "GET https://example.com/health"';
  const match = /^\s*([A-Za-z]+)\s+(\S+)\s*$/.exec(command);
  if (match?.[2] === undefined) return usage;
  let url: URL;
  try {
    url = new URL(match[2]);
  } catch {
    return `${usage}; "${match[2]}" is not a URL`;
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? undefined : `must use an http or https URL, got "${url.protocol}"`;
}

const RULES: Partial<Record<StepType, TypeRule>> = {
  http: { config: httpConfig, checkCommand: httpCommandProblem, oneCommand: '"METHOD url"' },
  jq: { config: jqConfig, oneCommand: 'the jq filter' },
  archive: { config: archiveConfig, commands: ['extract', 'create', 'list'], oneCommand: 'extract, create or list' },
  s3: { config: s3Config, commands: ['upload', 'download', 'list', 'delete'], oneCommand: 'upload, download, list or delete' },
  redis: { config: redisConfig },
  mail: { config: mailConfig },
  chat: { config: llmObject },
};

function checkCommands(step: Step, rule: TypeRule, path: string, issues: Issues): void {
  if (rule.oneCommand === undefined) return;
  const at = `${path}.command`;
  const [command] = step.commands;
  if (command === undefined) return issues.add(at, `is required: a step of type ${step.type} runs ${rule.oneCommand}`);
  if (step.commands.length > 1) return issues.add(at, `a step of type ${step.type} runs one command (${rule.oneCommand}), got ${step.commands.length}`);
  if (hasReference(command)) return;
  const name = command.trim();
  if (rule.commands !== undefined && !rule.commands.includes(name)) issues.add(at, `unknown ${step.type} command "${name}" (known: ${rule.commands.join(', ')})`);
  const problem = rule.checkCommand?.(command);
  if (problem !== undefined) issues.add(at, problem);
}

/** The `command`, `config` and `llm` of one typed step against what its type accepts. */
export function checkStepConfig(step: Step, paths: StepPaths, issues: Issues): void {
  const rule = RULES[step.type];
  if (step.llm !== undefined) issues.check(llmObject, step.llm, `${paths.step}.llm`);
  if (rule === undefined) return;
  checkCommands(step, rule, paths.step, issues);
  if (rule.config !== undefined) issues.check(rule.config, step.config, paths.config);
  if (step.type === 'jq' && step.script === undefined) issues.add(`${paths.step}.script`, 'is required: a step of type jq reads its JSON input from script');
  if (step.type === 's3') checkS3Fields(step, paths.config, issues);
}

const given = (value: unknown): boolean => value !== undefined && value !== '';

/** What each s3 command reads: a key names one object, `recursive` with `prefix` many. */
function checkS3Fields(step: Step, path: string, issues: Issues): void {
  const command = step.commands[0]?.trim();
  const config = step.config;
  const recursive = config.recursive === true || config.recursive === 'true';
  const require = (field: string, why: string): void => {
    if (!given(config[field])) issues.add(`${path}.${field}`, `is required: ${why}`);
  };
  if (step.commands.length !== 1 || command === undefined || !['upload', 'download', 'list', 'delete'].includes(command)) return;
  require('bucket', `s3 ${command} names its bucket`);
  if (command === 'upload') require('source', 'upload reads a local file (or, with recursive, a directory)');
  if (command === 'download') require('destination', 'download writes to a local path');
  const target = recursive ? 'prefix' : 'key';
  if (command === 'upload' && !recursive) require('key', 'upload writes one object (or set recursive with a prefix)');
  if (command === 'download' || command === 'delete') require(target, recursive ? `recursive ${command} works on every object under a prefix` : `${command} works on one object (or set recursive with a prefix)`);
}

/** DAG-level `llm`, `redis` and `smtp`: the defaults chat, redis and mail steps start from. */
export function checkDagServiceConfig(raw: Record<string, unknown>, issues: Issues): void {
  if (isRecord(raw.llm)) issues.check(llmObject, raw.llm, 'llm');
  if (isRecord(raw.redis)) issues.check(redisObject, raw.redis, 'redis');
  if (isRecord(raw.smtp)) issues.check(smtpObject, raw.smtp, 'smtp');
}

/** Rules that need the DAG's own settings: a redis step's connection merged with `redis`, a mail step's `smtp`. */
export function checkServiceSteps(dag: Dag, issues: Issues): void {
  const steps: Array<[Step, string]> = dag.steps.map((step, i) => [step, `steps[${i}]`]);
  for (const [kind, step] of Object.entries(dag.handlerOn)) steps.push([step, `handler_on.${kind}`]);
  const dagLevel = new Set<string>();
  for (const [step, path] of steps) {
    if (step.type === 'redis') checkRedisStep(step, dag.redis ?? {}, path, issues, dagLevel);
    if (step.type === 'mail' && dag.smtp === undefined) issues.add(`${path}.type`, 'a mail step sends through the DAG-level smtp server: add smtp: {host: ...}');
  }
}

/** A mode whose servers are not named is reported where the mode was set: the step's config, or once at the DAG-level `redis`. */
function checkRedisStep(step: Step, defaults: Record<string, unknown>, path: string, issues: Issues, dagLevel: Set<string>): void {
  const hasPipeline = step.config.pipeline !== undefined;
  if (step.commands.length === 0 && !hasPipeline) issues.add(`${path}.command`, 'is required: a redis step runs a command such as "GET key" (or config.pipeline)');
  if (step.commands.length > 0 && hasPipeline) issues.add(`${path}.config.pipeline`, 'cannot be combined with command: write the commands in one or the other');
  step.commands.forEach((command, i) => {
    const problem = redisCommandProblem(command);
    if (problem !== undefined) issues.add(step.commands.length > 1 ? `${path}.command[${i}]` : `${path}.command`, problem);
  });
  const setting = (key: string): unknown => step.config[key] ?? defaults[key];
  const mode = setting('mode');
  let problem: string | undefined;
  if (mode === 'sentinel' && (!given(setting('sentinel_master')) || setting('sentinel_addrs') === undefined)) problem = 'sentinel mode needs sentinel_master and sentinel_addrs (in config or the DAG-level redis)';
  if (mode === 'cluster' && setting('cluster_addrs') === undefined) problem = 'cluster mode needs cluster_addrs (in config or the DAG-level redis)';
  if (problem === undefined) return;
  const at = step.config.mode !== undefined ? `${path}.config.mode` : 'redis.mode';
  if (dagLevel.has(at)) return;
  if (at === 'redis.mode') dagLevel.add(at);
  issues.add(at, problem);
}

function redisCommandProblem(command: string): string | undefined {
  // Quoted words as in a shell (`SET k "a b"`), but nothing is expanded: the words go to the server.
  const words = splitShellWords(command);
  if (words === undefined) return 'unbalanced quote';
  const [name] = words;
  if (name === undefined) return 'must not be empty';
  return hasReference(name) || /^[A-Za-z][A-Za-z0-9_.|-]*$/.test(name) ? undefined : `"${name}" is not a redis command name`;
}

