import { z } from 'zod';
import type { ApprovalSpec, ParallelSpec, RouterSpec, Step, StepType } from '../model/dag.js';
import type { Issues} from './issues.js';
import { describeType } from './issues.js';
import {
  IDENTIFIER,
  bool,
  isRecord,
  nonNegInt,
  parseContinueOn,
  parseEnv,
  parseOutput,
  parsePreconditions,
  parseRepeatPolicy,
  parseRetryPolicy,
  parseShell,
  parseSignal,
  parseWorkerSelector,
  posInt,
  record,
  str,
  stringList,
} from './fields.js';
import { containerSchemaFor } from './placement-config.js';
import { refuseUnavailableType } from './unsupported.js';
import { checkStepConfig } from './step-config.js';
import { toError } from '../errors/to-error.js';

export const STEP_KEYS = new Set([
  'name', 'id', 'description', 'command', 'script', 'depends', 'working_dir', 'dir', 'shell', 'stdout', 'stderr',
  'log_output', 'output', 'env', 'call', 'run', 'params', 'parallel', 'preconditions', 'continue_on', 'retry_policy',
  'repeat_policy', 'mail_on_error', 'signal_on_stop', 'timeout_sec', 'container', 'executor', 'type', 'config', 'llm',
  'messages', 'approval', 'worker_selector', 'value', 'routes',
]);

/** Keys `defaults:` may set; anything else there is an error. */
export const DEFAULTS_KEYS = ['retry_policy', 'continue_on', 'repeat_policy', 'timeout_sec', 'mail_on_error', 'signal_on_stop', 'env', 'preconditions'] as const;

const TYPE_ALIASES: Record<string, StepType> = {
  shell: 'shell', command: 'shell', dag: 'dag', subworkflow: 'dag', router: 'router', http: 'http', jq: 'jq',
  archive: 'archive', mail: 'mail', ssh: 'ssh', docker: 'docker', container: 'docker', s3: 's3', redis: 'redis',
  chat: 'chat', agent: 'agent', gha: 'gha', github_action: 'gha', 'github-action': 'gha',
};

const STEP_NAME = /^[^/\\\u0000-\u001f]{1,100}$/;

const parallelObject = z.strictObject({
  items: z.union([z.array(z.unknown()), str], { error: 'must be a list or a ${VAR} reference' }),
  max_concurrent: posInt.optional(),
});

const approvalObject = z.strictObject({
  prompt: str.optional(),
  input: z.array(z.string().regex(IDENTIFIER, 'must be a variable name'), { error: 'must be a list of names' }).optional(),
  required: z.array(str, { error: 'must be a list of names' }).optional(),
});

const messageObject = z.strictObject({ role: z.enum(['system', 'user', 'assistant'], { error: 'must be system, user or assistant' }), content: str });

export const DEFAULT_MAX_CONCURRENT = 10;

function commandsOf(raw: unknown, path: string, issues: Issues): string[] {
  if (raw === undefined || raw === null) return [];
  if (typeof raw === 'string') return raw.trim() === '' ? [] : [raw.includes('\n') ? raw : raw.trim()];
  if (Array.isArray(raw)) {
    const out: string[] = [];
    raw.forEach((item, i) => {
      if (typeof item === 'string' || typeof item === 'number' || typeof item === 'boolean') out.push(String(item));
      else issues.add(`${path}[${i}]`, `must be a string, got ${describeType(item)}`);
    });
    return out;
  }
  issues.add(path, `must be a string or a list of strings, got ${describeType(raw)}`);
  return [];
}

function parseType(raw: Record<string, unknown>, path: string, issues: Issues): StepType {
  const written = raw.type ?? (typeof raw.executor === 'string' ? raw.executor : isRecord(raw.executor) ? raw.executor.type : undefined);
  if (written === undefined) return raw.call !== undefined || raw.run !== undefined ? 'dag' : 'shell';
  const type = typeof written === 'string' ? TYPE_ALIASES[written] : undefined;
  if (type === undefined) {
    issues.add(`${path}.type`, `unknown step type ${typeof written === 'string' ? `"${written}"` : describeType(written)} (known: ${Object.keys(TYPE_ALIASES).join(', ')})`);
    return 'shell';
  }
  return type;
}

function parseParallel(raw: unknown, path: string, issues: Issues): ParallelSpec | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (Array.isArray(raw)) return { items: raw, maxConcurrent: DEFAULT_MAX_CONCURRENT };
  if (typeof raw === 'string') return { items: raw, maxConcurrent: DEFAULT_MAX_CONCURRENT };
  const value = issues.check(parallelObject, raw, path);
  if (value === undefined) return undefined;
  return { items: value.items, maxConcurrent: value.max_concurrent ?? DEFAULT_MAX_CONCURRENT };
}

function parseApproval(raw: unknown, path: string, issues: Issues): ApprovalSpec | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (raw === true) return { input: [], required: [] };
  const value = issues.check(approvalObject, raw, path);
  if (value === undefined) return undefined;
  const input = value.input ?? [];
  const required = value.required ?? [];
  for (const name of required) {
    if (!input.includes(name)) issues.add(`${path}.required`, `"${name}" is not listed in input`);
  }
  const spec: ApprovalSpec = { input, required };
  if (value.prompt !== undefined) spec.prompt = value.prompt;
  return spec;
}

function parseRouter(raw: Record<string, unknown>, path: string, issues: Issues): RouterSpec | undefined {
  const value = raw.value ?? (isRecord(raw.config) ? raw.config.value : undefined);
  const routes = raw.routes ?? (isRecord(raw.config) ? raw.config.routes : undefined);
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
    issues.add(`${path}.value`, 'is required for a router step (a string such as ${STATUS})');
    return undefined;
  }
  if (!isRecord(routes) || Object.keys(routes).length === 0) {
    issues.add(`${path}.routes`, 'is required for a router step: a mapping of pattern to step names');
    return undefined;
  }
  const out: RouterSpec = { value: String(value), routes: [] };
  for (const [pattern, targets] of Object.entries(routes)) {
    const list = issues.check(stringList, targets, `${path}.routes.${pattern}`);
    if (list === undefined) continue;
    if (pattern.startsWith('re:')) {
      try {
        new RegExp(pattern.slice(3));
      } catch (error) {
        issues.add(`${path}.routes.${pattern}`, `is not a valid regular expression (${toError(error).message})`);
      }
    }
    out.routes.push({ pattern, targets: list });
  }
  return out;
}

/** Applies `defaults:` to a raw step: set-if-unset fields, env and preconditions prepended. */
export function applyDefaults(raw: Record<string, unknown>, defaults: Record<string, unknown> | undefined): Record<string, unknown> {
  if (defaults === undefined) return raw;
  const out = { ...raw };
  for (const key of DEFAULTS_KEYS) {
    if (!(key in defaults)) continue;
    if (key === 'env' || key === 'preconditions') continue;
    if (!(key in out)) out[key] = defaults[key];
  }
  return out;
}

export interface StepContext {
  issues: Issues;
  /** Normalised `defaults.env` and `defaults.preconditions`, prepended to every step's own. */
  defaultEnv: Step['env'];
  defaultPreconditions: Step['preconditions'];
}

function optionalString(raw: Record<string, unknown>, key: string, path: string, issues: Issues): string | undefined {
  if (raw[key] === undefined || raw[key] === null) return undefined;
  return issues.check(str, raw[key], `${path}.${key}`);
}

/** One step, normalised. `name` is already decided by the caller (explicit or generated). */
export function parseStep(raw: Record<string, unknown>, name: string, path: string, ctx: StepContext): Step {
  const { issues } = ctx;
  for (const key of Object.keys(raw)) if (!STEP_KEYS.has(key)) issues.add(`${path}.${key}`, 'unknown field');
  if (!STEP_NAME.test(name)) issues.add(`${path}.name`, 'must be 1-100 characters without "/" or control characters');
  const type = parseType(raw, path, issues);
  const step: Step = {
    name,
    type,
    commands: commandsOf(raw.command, `${path}.command`, issues),
    depends: [],
    env: [...ctx.defaultEnv, ...parseEnv(raw.env, `${path}.env`, issues)],
    preconditions: [...ctx.defaultPreconditions, ...parsePreconditions(raw.preconditions, `${path}.preconditions`, issues)],
    continueOn: parseContinueOn(raw.continue_on, `${path}.continue_on`, issues),
    mailOnError: raw.mail_on_error === undefined ? false : (issues.check(bool, raw.mail_on_error, `${path}.mail_on_error`) ?? false),
    signalOnStop: parseSignal(raw.signal_on_stop, `${path}.signal_on_stop`, issues) ?? 'SIGTERM',
    timeoutSec: raw.timeout_sec === undefined ? 0 : (issues.check(nonNegInt, raw.timeout_sec, `${path}.timeout_sec`) ?? 0),
    config: raw.config === undefined || raw.config === null ? {} : (issues.check(record, raw.config, `${path}.config`) ?? {}),
  };
  if (raw.depends !== undefined && raw.depends !== null) step.depends = issues.check(stringList, raw.depends, `${path}.depends`) ?? [];
  assignOptional(step, raw, path, issues);
  assignExecution(step, raw, path, issues);
  refuseUnavailableType(step, path, issues);
  const legacyConfig = raw.config === undefined && isRecord(raw.executor) && isRecord(raw.executor.config);
  checkStepConfig(step, { step: path, config: legacyConfig ? `${path}.executor.config` : `${path}.config` }, issues);
  return step;
}

function assignOptional(step: Step, raw: Record<string, unknown>, path: string, issues: Issues): void {
  if (raw.id !== undefined) {
    const id = issues.check(z.string({ error: 'must be a string' }).regex(IDENTIFIER, 'must start with a letter or _ and hold only letters, digits and _'), raw.id, `${path}.id`);
    if (id !== undefined) step.id = id;
  }
  const description = optionalString(raw, 'description', path, issues);
  if (description !== undefined) step.description = description;
  const workingDir = optionalString(raw, 'working_dir', path, issues) ?? optionalString(raw, 'dir', path, issues);
  if (workingDir !== undefined) step.workingDir = workingDir;
  const shell = parseShell(raw.shell, `${path}.shell`, issues);
  if (shell !== undefined) step.shell = shell;
  const stdout = optionalString(raw, 'stdout', path, issues);
  if (stdout !== undefined) step.stdout = stdout;
  const stderr = optionalString(raw, 'stderr', path, issues);
  if (stderr !== undefined) step.stderr = stderr;
  if (raw.log_output !== undefined) {
    const mode = issues.check(z.enum(['separate', 'merged'], { error: 'must be separate or merged' }), raw.log_output, `${path}.log_output`);
    if (mode !== undefined) step.logOutput = mode;
  }
  const output = parseOutput(raw.output, `${path}.output`, issues);
  if (output !== undefined) step.output = output;
  const retry = parseRetryPolicy(raw.retry_policy, `${path}.retry_policy`, issues);
  if (retry !== undefined) step.retryPolicy = retry;
  const repeat = parseRepeatPolicy(raw.repeat_policy, `${path}.repeat_policy`, issues);
  if (repeat !== undefined) step.repeatPolicy = repeat;
  const selector = parseWorkerSelector(raw.worker_selector, `${path}.worker_selector`, issues);
  if (selector !== undefined) step.workerSelector = selector;
  const approval = parseApproval(raw.approval, `${path}.approval`, issues);
  if (approval !== undefined) step.approval = approval;
  const parallel = parseParallel(raw.parallel, `${path}.parallel`, issues);
  if (parallel !== undefined) step.parallel = parallel;
}

function assignExecution(step: Step, raw: Record<string, unknown>, path: string, issues: Issues): void {
  const script = optionalString(raw, 'script', path, issues);
  if (script !== undefined) step.script = script;
  const call = optionalString(raw, 'call', path, issues) ?? optionalString(raw, 'run', path, issues);
  if (call !== undefined) step.call = call;
  if (step.type === 'dag' && step.call === undefined) {
    if (step.commands.length === 1) step.call = step.commands[0];
    else issues.add(path, 'a dag step needs `call` (or `command`) naming the DAG to run');
  }
  if (step.type === 'dag') step.commands = [];
  if (raw.params !== undefined && raw.params !== null) {
    if (typeof raw.params === 'string' || isRecord(raw.params)) step.params = raw.params;
    else issues.add(`${path}.params`, `must be a string or a mapping, got ${describeType(raw.params)}`);
  }
  if (raw.container !== undefined && raw.container !== null) {
    if (typeof raw.container === 'string') step.container = raw.container;
    else if (issues.check(containerSchemaFor(raw.container), raw.container, `${path}.container`) !== undefined) step.container = raw.container as Record<string, unknown>;
    if (raw.executor !== undefined) issues.add(`${path}.container`, 'cannot be combined with executor');
    if (raw.script !== undefined) issues.add(`${path}.container`, 'cannot be combined with script');
  }
  if (raw.executor !== undefined && raw.executor !== null) {
    if (typeof raw.executor === 'string') step.executor = raw.executor;
    else if (isRecord(raw.executor)) {
      step.executor = raw.executor;
      if (isRecord(raw.executor.config) && raw.config === undefined) step.config = raw.executor.config;
    } else issues.add(`${path}.executor`, `must be a type name or a mapping, got ${describeType(raw.executor)}`);
  }
  if (raw.llm !== undefined && raw.llm !== null) {
    const llm = issues.check(record, raw.llm, `${path}.llm`);
    if (llm !== undefined) step.llm = llm;
  }
  if (raw.messages !== undefined) {
    const messages = issues.check(z.array(messageObject, { error: 'must be a list of {role, content}' }), raw.messages, `${path}.messages`);
    if (messages !== undefined) step.messages = messages;
  }
  if (step.type === 'router') {
    const router = parseRouter(raw, path, issues);
    if (router !== undefined) step.router = router;
  } else if (raw.value !== undefined || raw.routes !== undefined) {
    issues.add(path, '`value` and `routes` belong to router steps (type: router)');
  }
  if (step.parallel !== undefined && step.call === undefined) issues.add(`${path}.parallel`, 'needs `call`: the DAG run once per item');
  const runnable = step.commands.length > 0 || step.script !== undefined || step.type !== 'shell' || step.call !== undefined || step.parallel !== undefined || step.approval !== undefined;
  if (!runnable) issues.add(path, 'needs a command, a script, or a call');
}
