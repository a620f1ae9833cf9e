/**
 * The one place that turns the model into the contract's payloads: the `dag` detail object and
 * the list item's `dag` summary. Absent optional strings are the empty string (as in run
 * records), absent lists are empty, so clients never test for undefined.
 */
import type { Dag, Precondition, Step } from '../model/dag.js';
import { formatDefaultParams, paramNames, renderParamDefs, splitShellWords, type ParamDefPayload } from '../params/index.js';
import { scheduleEntryPayload } from '../schedule/index.js';

export interface PreconditionPayload {
  condition: string;
  expected: string;
  error: string;
  negate?: boolean;
}

export interface StepPayload {
  name: string;
  id: string;
  description: string;
  type: string;
  dir: string;
  command: string;
  args: string[];
  script: string;
  run: string;
  params: string;
  stdout: string;
  stderr: string;
  output: string;
  depends: string[];
  preconditions: PreconditionPayload[];
  repeat_policy: { repeat: boolean; interval: number };
  mail_on_error: boolean;
  /** Steps that wait for a decision only: what to ask and the inputs the decision carries. */
  approval?: ApprovalPayload;
}

export interface ApprovalPayload {
  prompt: string;
  input: string[];
  required: string[];
}

export type ScheduleItemPayload = { expression: string } | { kind: 'at'; at: string };

export interface DagListItemPayload {
  name: string;
  group: string;
  schedule: ScheduleItemPayload[];
  description: string;
  params: string[];
  defaultParams: string;
  labels: string[];
}

export interface DagDetailPayload extends DagListItemPayload {
  type: string;
  env: string[];
  log_dir: string;
  handler_on: Record<string, StepPayload>;
  steps: StepPayload[];
  delay: number;
  hist_retention_days: number;
  histRetentionDays: number;
  preconditions: PreconditionPayload[];
  max_active_runs: number;
  max_active_steps: number;
  paramDefs: ParamDefPayload[];
  paramSchema?: Record<string, unknown>;
}

function preconditionPayload(p: Precondition): PreconditionPayload {
  const out: PreconditionPayload = { condition: p.condition, expected: p.expected ?? '', error: p.error ?? '' };
  if (p.negate) out.negate = true;
  return out;
}

/** A single-line command is shown split into program and arguments; scripts and sequences whole. */
function commandParts(step: Step): { command: string; args: string[] } {
  const [first] = step.commands;
  if (first === undefined) return { command: '', args: [] };
  if (step.commands.length === 1 && !first.includes('\n')) {
    const words = splitShellWords(first);
    if (words !== undefined && words.length > 0) return { command: words[0] ?? '', args: words.slice(1) };
  }
  return { command: step.commands.join('\n'), args: [] };
}

function stepParams(params: Step['params']): string {
  if (params === undefined) return '';
  if (typeof params === 'string') return params;
  return Object.entries(params)
    .map(([k, v]) => `${k}="${typeof v === 'string' ? v : JSON.stringify(v).replace(/[\\"]/g, (c) => `\\${c}`)}"`)
    .join(' ');
}

export function toStepPayload(step: Step): StepPayload {
  return {
    name: step.name,
    id: step.id ?? '',
    description: step.description ?? '',
    type: step.type,
    dir: step.workingDir ?? '',
    ...commandParts(step),
    script: step.script ?? '',
    run: step.call ?? '',
    params: stepParams(step.params),
    stdout: step.stdout ?? '',
    stderr: step.stderr ?? '',
    output: step.output?.name ?? '',
    depends: [...step.depends],
    preconditions: step.preconditions.map(preconditionPayload),
    repeat_policy: { repeat: step.repeatPolicy !== undefined, interval: step.repeatPolicy?.intervalSec ?? 0 },
    mail_on_error: step.mailOnError,
    ...(step.approval !== undefined ? { approval: { prompt: step.approval.prompt ?? '', input: [...step.approval.input], required: [...step.approval.required] } } : {}),
  };
}

export function toDagListItemDag(dag: Dag): DagListItemPayload {
  return {
    name: dag.name,
    group: dag.group ?? '',
    schedule: dag.schedule.start.map(scheduleEntryPayload),
    description: dag.description ?? '',
    params: paramNames(dag.params),
    defaultParams: formatDefaultParams(dag.params),
    labels: [...dag.labels],
  };
}

export function toDagDetail(dag: Dag): DagDetailPayload {
  const handlers: Record<string, StepPayload> = {};
  for (const [kind, step] of Object.entries(dag.handlerOn)) handlers[kind] = toStepPayload(step);
  const detail: DagDetailPayload = {
    ...toDagListItemDag(dag),
    type: dag.type,
    env: dag.env.map((e) => `${e.key}=${e.value}`),
    log_dir: dag.logDir ?? '',
    handler_on: handlers,
    steps: dag.steps.map(toStepPayload),
    delay: dag.delaySec,
    hist_retention_days: dag.histRetentionDays,
    histRetentionDays: dag.histRetentionDays,
    preconditions: dag.preconditions.map(preconditionPayload),
    max_active_runs: dag.maxActiveRuns,
    max_active_steps: dag.maxActiveSteps,
    paramDefs: renderParamDefs(dag.params),
  };
  if (dag.params.schema !== undefined) detail.paramSchema = { ...dag.params.schema };
  return detail;
}
