import { z } from 'zod';
import type { Step, StepType } from '../model/dag.js';
import type { Issues } from './issues.js';
import { isRecord, str } from './fields.js';

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

const REDIS_MODES = ['standalone', 'sentinel', 'cluster'] as const;
const redisObject = z.looseObject({ mode: orReference(z.enum(REDIS_MODES), `must be one of ${REDIS_MODES.join(', ')}`).optional() });

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
});

const mailConfig = z.strictObject({
  to: strings.optional(),
  from: str.optional(),
  subject: str.optional(),
  message: str.optional(),
  contentType: str.optional(),
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
  redis: { config: redisObject },
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
}

/** DAG-level `llm` and `redis`: the defaults chat and redis steps start from. */
export function checkDagServiceConfig(raw: Record<string, unknown>, issues: Issues): void {
  if (isRecord(raw.llm)) issues.check(llmObject, raw.llm, 'llm');
  if (isRecord(raw.redis)) issues.check(redisObject, raw.redis, 'redis');
}
