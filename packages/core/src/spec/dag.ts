import { z } from 'zod';
import { HANDLER_KINDS, type Dag, type HandlerKind, type MailConfig, type SecretRef, type Step } from '../model/dag.js';
import { parseParamsField } from '../params/index.js';
import { parseScheduleField } from '../schedule/index.js';
import { validateDagName } from '../names/index.js';
import { parseDuration } from './duration.js';
import type { Issues} from './issues.js';
import { describeType } from './issues.js';
import { bool, int, isRecord, nonNegInt, parseEnv, parsePreconditions, parseShell, parseWorkerSelector, posInt, record, str, stringList } from './fields.js';
import { DEFAULTS_KEYS, applyDefaults, parseStep, type StepContext } from './step.js';
import { linkSteps } from './graph.js';
import { checkMailSettings } from './mail-settings.js';
import { checkPlacements, containerSchemaFor, sshConfigSchema } from './placement-config.js';
import { checkDagServiceConfig, checkServiceSteps } from './step-config.js';

export const ROOT_KEYS = new Set([
  'name', 'description', 'group', 'labels', 'tags', 'type', 'schedule', 'skip_if_successful', 'restart_wait_sec',
  'catchup_window', 'overlap_policy', 'max_active_runs', 'max_active_steps', 'timeout_sec', 'delay_sec',
  'max_clean_up_time_sec', 'preconditions', 'run_config', 'defaults', 'params', 'env', 'secrets', 'dotenv',
  'working_dir', 'shell', 'log_dir', 'log_output', 'hist_retention_days', 'max_output_size', 'container', 'ssh', 'llm',
  'redis', 'smtp', 'otel', 'queue', 'worker_selector', 'mail_on', 'error_mail', 'info_mail', 'wait_mail', 'handler_on',
  'steps',
]);

export const DEFAULT_HIST_RETENTION_DAYS = 30;
export const DEFAULT_MAX_OUTPUT_SIZE = 1_048_576;

const secretObject = z.strictObject({
  name: z.string({ error: 'must be a string' }).regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name'),
  provider: z.enum(['env', 'file'], { error: 'must be env or file' }),
  key: z.string({ error: 'must be a string' }).min(1, 'must not be empty'),
  options: z.record(z.string(), z.string({ error: 'option values must be strings' })).optional(),
});

const address = z.string({ error: 'must be a string' }).min(1, 'must not be empty');
const mailObject = z.strictObject({
  from: address,
  to: z.union([address, z.array(address).min(1, 'must name at least one recipient')], { error: 'must be an address or a list of addresses' }).transform((v) => (Array.isArray(v) ? v : [v])),
  prefix: str.optional(),
  attach_logs: bool.optional(),
});

const runConfigObject = z.strictObject({ disable_param_edit: bool.optional(), disable_run_id_edit: bool.optional() });
const mailOnObject = z.strictObject({ success: bool.optional(), failure: bool.optional(), wait: bool.optional() });

function labelValue(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function labelsOf(raw: unknown, path: string, issues: Issues): string[] {
  if (raw === undefined || raw === null) return [];
  let items: string[] = [];
  if (typeof raw === 'string') items = raw.split(',');
  else if (Array.isArray(raw)) {
    raw.forEach((item, i) => {
      if (typeof item === 'string' || typeof item === 'number' || typeof item === 'boolean') items.push(String(item));
      else if (isRecord(item)) items.push(...Object.entries(item).map(([k, v]) => `${k}=${labelValue(v)}`));
      else issues.add(`${path}[${i}]`, `must be a string, got ${describeType(item)}`);
    });
  } else if (isRecord(raw)) items = Object.entries(raw).map(([k, v]) => (v === null || v === '' ? k : `${k}=${labelValue(v)}`));
  else issues.add(path, `must be a string, a list or a mapping, got ${describeType(raw)}`);
  return [...new Set(items.map((s) => s.trim()).filter((s) => s.length > 0))];
}

function mailOf(raw: unknown, path: string, issues: Issues): MailConfig | undefined {
  if (raw === undefined || raw === null) return undefined;
  const value = issues.check(mailObject, raw, path);
  if (value === undefined) return undefined;
  const mail: MailConfig = { from: value.from, to: value.to, attachLogs: value.attach_logs ?? false };
  if (value.prefix !== undefined) mail.prefix = value.prefix;
  return mail;
}

function secretsOf(raw: unknown, path: string, issues: Issues): SecretRef[] {
  if (raw === undefined || raw === null) return [];
  const list = issues.check(z.array(z.unknown(), { error: 'must be a list' }), raw, path) ?? [];
  const out: SecretRef[] = [];
  list.forEach((item, i) => {
    const value = issues.check(secretObject, item, `${path}[${i}]`);
    if (value !== undefined) out.push({ name: value.name, provider: value.provider, key: value.key, options: value.options ?? {} });
  });
  return out;
}

/** Named options of a raw mapping, checked with one schema each; absent keys stay absent. */
function optional<S extends z.ZodType>(raw: Record<string, unknown>, key: string, schema: S, issues: Issues): z.output<S> | undefined {
  const value = raw[key];
  if (value === undefined || value === null) return undefined;
  return issues.check(schema, value, key);
}

function stepList(raw: unknown, issues: Issues): Array<{ raw: Record<string, unknown>; explicitName?: string }> {
  if (raw === undefined || raw === null) {
    issues.add('steps', 'at least one step is required');
    return [];
  }
  const entries: Array<{ raw: Record<string, unknown>; explicitName?: string }> = [];
  const items: Array<[unknown, string | undefined]> = Array.isArray(raw)
    ? raw.map((item): [unknown, string | undefined] => [item, undefined])
    : isRecord(raw)
      ? Object.entries(raw).map(([name, item]): [unknown, string | undefined] => [item, name])
      : [];
  if (!Array.isArray(raw) && !isRecord(raw)) issues.add('steps', `must be a list of steps, got ${describeType(raw)}`);
  else if (items.length === 0) issues.add('steps', 'at least one step is required');
  items.forEach(([item, mapName], i) => {
    if (typeof item === 'string') entries.push({ raw: { command: item }, ...(mapName !== undefined ? { explicitName: mapName } : {}) });
    else if (isRecord(item)) {
      const name = typeof item.name === 'string' ? item.name : mapName;
      entries.push({ raw: item, ...(name !== undefined ? { explicitName: name } : {}) });
    } else {
      issues.add(`steps[${i}]`, `must be a step mapping or a command string, got ${describeType(item)}`);
      entries.push({ raw: {} });
    }
  });
  return entries;
}

/** Generated names are `step_<n>` by position (1-based); a clash with a written name gets a suffix. */
function decideNames(entries: Array<{ explicitName?: string }>): string[] {
  const taken = new Set(entries.map((e) => e.explicitName).filter((n): n is string => n !== undefined));
  return entries.map((entry, i) => {
    if (entry.explicitName !== undefined) return entry.explicitName;
    let name = `step_${i + 1}`;
    for (let n = 2; taken.has(name); n += 1) name = `step_${i + 1}_${n}`;
    taken.add(name);
    return name;
  });
}

function handlersOf(raw: unknown, ctx: StepContext, defaults: Record<string, unknown> | undefined): Partial<Record<HandlerKind, Step>> {
  const out: Partial<Record<HandlerKind, Step>> = {};
  if (raw === undefined || raw === null) return out;
  if (!isRecord(raw)) {
    ctx.issues.add('handler_on', `must be a mapping, got ${describeType(raw)}`);
    return out;
  }
  for (const [key, value] of Object.entries(raw)) {
    const kind = key === 'cancel' ? 'abort' : (key as HandlerKind);
    if (!HANDLER_KINDS.includes(kind)) {
      ctx.issues.add(`handler_on.${key}`, `unknown handler (known: ${HANDLER_KINDS.join(', ')})`);
      continue;
    }
    const stepRaw = typeof value === 'string' ? { command: value } : isRecord(value) ? value : undefined;
    if (stepRaw === undefined) {
      ctx.issues.add(`handler_on.${key}`, `must be a step mapping or a command string, got ${describeType(value)}`);
      continue;
    }
    const name = typeof stepRaw.name === 'string' ? stepRaw.name : `on${kind[0]?.toUpperCase() ?? ''}${kind.slice(1)}`;
    const step = parseStep(applyDefaults(stepRaw, defaults), name, `handler_on.${key}`, ctx);
    if (step.depends.length > 0) ctx.issues.add(`handler_on.${key}.depends`, 'handlers cannot depend on steps');
    step.depends = [];
    out[kind] = step;
  }
  return out;
}

function defaultsOf(raw: unknown, issues: Issues): Record<string, unknown> | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!isRecord(raw)) {
    issues.add('defaults', `must be a mapping, got ${describeType(raw)}`);
    return undefined;
  }
  const allowed = new Set<string>(DEFAULTS_KEYS);
  for (const key of Object.keys(raw)) {
    if (!allowed.has(key)) issues.add(`defaults.${key}`, `unknown field (defaults may set ${DEFAULTS_KEYS.join(', ')})`);
  }
  return raw;
}

function containerOf(raw: unknown, issues: Issues): string | Record<string, unknown> | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw === 'string') return raw;
  return issues.check(containerSchemaFor(raw), raw, 'container') === undefined ? undefined : (raw as Record<string, unknown>);
}

/** Turns one raw root mapping into the model; `issues` collects every problem. */
export function normalizeDag(raw: Record<string, unknown>, fallbackName: string, issues: Issues): Dag {
  for (const key of Object.keys(raw)) if (!ROOT_KEYS.has(key)) issues.add(key, 'unknown field');
  const name = optional(raw, 'name', str, issues) ?? fallbackName;
  const nameProblem = validateDagName(name);
  if (nameProblem !== undefined) issues.add('name', nameProblem);
  const defaults = defaultsOf(raw.defaults, issues);
  const ctx: StepContext = {
    issues,
    defaultEnv: parseEnv(defaults?.env, 'defaults.env', issues),
    defaultPreconditions: parsePreconditions(defaults?.preconditions, 'defaults.preconditions', issues),
  };
  const schedule = parseScheduleField(raw.schedule, 'schedule');
  schedule.errors.forEach((e) => issues.list.push(e));
  const params = parseParamsField(raw.params, 'params');
  params.errors.forEach((e) => issues.list.push(e));
  const runConfig = optional(raw, 'run_config', runConfigObject, issues);
  const mailOn = optional(raw, 'mail_on', mailOnObject, issues);
  const dag: Dag = {
    name,
    labels: labelsOf(raw.labels ?? raw.tags, raw.labels !== undefined ? 'labels' : 'tags', issues),
    type: optional(raw, 'type', z.enum(['chain', 'graph'], { error: 'must be chain or graph' }), issues) ?? 'chain',
    schedule: schedule.value,
    skipIfSuccessful: optional(raw, 'skip_if_successful', bool, issues) ?? false,
    restartWaitSec: optional(raw, 'restart_wait_sec', nonNegInt, issues) ?? 0,
    overlapPolicy: optional(raw, 'overlap_policy', z.enum(['skip', 'all', 'latest'], { error: 'must be skip, all or latest' }), issues) ?? 'skip',
    maxActiveRuns: optional(raw, 'max_active_runs', posInt, issues) ?? 1,
    maxActiveSteps: optional(raw, 'max_active_steps', posInt, issues) ?? 1,
    timeoutSec: optional(raw, 'timeout_sec', nonNegInt, issues) ?? 0,
    delaySec: optional(raw, 'delay_sec', nonNegInt, issues) ?? 0,
    maxCleanUpTimeSec: optional(raw, 'max_clean_up_time_sec', nonNegInt, issues) ?? 5,
    preconditions: parsePreconditions(raw.preconditions, 'preconditions', issues),
    runConfig: { disableParamEdit: runConfig?.disable_param_edit ?? false, disableRunIdEdit: runConfig?.disable_run_id_edit ?? false },
    params: params.value,
    env: parseEnv(raw.env, 'env', issues),
    secrets: secretsOf(raw.secrets, 'secrets', issues),
    dotenv: raw.dotenv === undefined || raw.dotenv === null ? ['.env'] : (optional(raw, 'dotenv', stringList, issues) ?? ['.env']),
    logOutput: optional(raw, 'log_output', z.enum(['separate', 'merged'], { error: 'must be separate or merged' }), issues) ?? 'separate',
    histRetentionDays: optional(raw, 'hist_retention_days', int, issues) ?? DEFAULT_HIST_RETENTION_DAYS,
    maxOutputSize: optional(raw, 'max_output_size', posInt, issues) ?? DEFAULT_MAX_OUTPUT_SIZE,
    mailOn: { success: mailOn?.success ?? false, failure: mailOn?.failure ?? false, wait: mailOn?.wait ?? false },
    handlerOn: handlersOf(raw.handler_on, ctx, defaults),
    steps: [],
  };
  assignRootOptionals(dag, raw, issues);
  const entries = stepList(raw.steps, issues);
  const names = decideNames(entries);
  dag.steps = entries.map((entry, i) => parseStep(applyDefaults(entry.raw, defaults), names[i] ?? `step_${i + 1}`, `steps[${i}]`, ctx));
  linkSteps(dag, issues);
  checkPlacements(dag, issues);
  checkServiceSteps(dag, issues);
  checkMailSettings({ dag, defaultsMailOnError: defaults?.mail_on_error === true, stepPaths: ownMailOnError(entries, raw.handler_on) }, issues);
  return dag;
}

/** Steps and handlers whose own spec (not `defaults`) asks for a mail on error. */
function ownMailOnError(entries: Array<{ raw: Record<string, unknown> }>, handlers: unknown): string[] {
  const steps = entries.flatMap((entry, i) => (entry.raw.mail_on_error === true ? [`steps[${i}]`] : []));
  const ownHandlers = isRecord(handlers) ? Object.entries(handlers).flatMap(([key, value]) => (isRecord(value) && value.mail_on_error === true ? [`handler_on.${key}`] : [])) : [];
  return [...ownHandlers, ...steps];
}

function assignRootOptionals(dag: Dag, raw: Record<string, unknown>, issues: Issues): void {
  const group = optional(raw, 'group', str, issues);
  if (group !== undefined) dag.group = group;
  const description = optional(raw, 'description', str, issues);
  if (description !== undefined) dag.description = description;
  const catchup = optional(raw, 'catchup_window', str, issues);
  if (catchup !== undefined) {
    const ms = parseDuration(catchup);
    if (ms === undefined) issues.add('catchup_window', `must be a duration such as 90s, 30m, 6h or 2d12h, got "${catchup}"`);
    else {
      dag.catchupWindow = catchup;
      dag.catchupWindowMs = ms;
    }
  }
  const workingDir = optional(raw, 'working_dir', str, issues);
  if (workingDir !== undefined) dag.workingDir = workingDir;
  const shell = parseShell(raw.shell, 'shell', issues);
  if (shell !== undefined) dag.shell = shell;
  const logDir = optional(raw, 'log_dir', str, issues);
  if (logDir !== undefined) dag.logDir = logDir;
  const container = containerOf(raw.container, issues);
  if (container !== undefined) dag.container = container;
  const ssh = optional(raw, 'ssh', sshConfigSchema, issues);
  if (ssh !== undefined) {
    dag.ssh = raw.ssh as Record<string, unknown>;
    if (dag.container !== undefined) issues.add('ssh', 'cannot be combined with a DAG-level container');
  }
  for (const key of ['llm', 'redis', 'smtp', 'otel'] as const) {
    const value = optional(raw, key, record, issues);
    if (value !== undefined) dag[key] = value;
  }
  checkDagServiceConfig(raw, issues);
  const queue = optional(raw, 'queue', z.string({ error: 'must be a string' }).regex(/^[A-Za-z0-9_.-]+$/, 'must be a queue name (letters, digits, _ . -)'), issues);
  if (queue !== undefined) dag.queue = queue;
  const selector = parseWorkerSelector(raw.worker_selector, 'worker_selector', issues);
  if (selector !== undefined) dag.workerSelector = selector;
  const errorMail = mailOf(raw.error_mail, 'error_mail', issues);
  if (errorMail !== undefined) dag.errorMail = errorMail;
  const infoMail = mailOf(raw.info_mail, 'info_mail', issues);
  if (infoMail !== undefined) dag.infoMail = infoMail;
  const waitMail = mailOf(raw.wait_mail, 'wait_mail', issues);
  if (waitMail !== undefined) dag.waitMail = waitMail;
}
