/**
 * The normalised DAG model: what a YAML definition becomes after parsing, defaults,
 * base-configuration inheritance and validation. Every other package works on these
 * types, never on raw YAML. Field names are camelCase; the contract's snake_case
 * names appear only in the YAML schema and in the detail payload built from this model.
 */

export type DagType = 'chain' | 'graph';
export type OverlapPolicy = 'skip' | 'all' | 'latest';
export type LogOutputMode = 'separate' | 'merged';
export type HandlerKind = 'init' | 'success' | 'failure' | 'abort' | 'wait' | 'exit';
export const HANDLER_KINDS: readonly HandlerKind[] = ['init', 'success', 'failure', 'abort', 'wait', 'exit'];

/** An ordered environment entry; values may hold `${VAR}` references expanded at run time. */
export interface EnvEntry {
  key: string;
  value: string;
}

/** A recurring cron entry. `expression` is always canonical five-field cron (aliases expanded). */
export interface CronScheduleEntry {
  kind: 'cron';
  expression: string;
  /** IANA zone from a `CRON_TZ=` prefix; absent means the configured server zone. */
  timezone?: string;
  profile?: string;
}

/** A one-off entry: fires once at the first scheduler tick at or after `at` (RFC 3339, UTC). */
export interface AtScheduleEntry {
  kind: 'at';
  at: string;
  profile?: string;
}

export type ScheduleEntry = CronScheduleEntry | AtScheduleEntry;

export interface ScheduleSet {
  start: ScheduleEntry[];
  stop: ScheduleEntry[];
  restart: ScheduleEntry[];
}

export type ParamType = 'string' | 'integer' | 'number' | 'boolean';

/** One declared parameter. Positional params have `position` (0-based) and a generated name ("1", "2", ...). */
export interface ParamDef {
  name: string;
  position?: number;
  type: ParamType;
  description?: string;
  /** The authored literal default; never the result of evaluating `eval`. */
  default?: string | number | boolean;
  /** A template evaluated when a run starts (`eval:`); never evaluated for display. */
  eval?: string;
  enum?: Array<string | number | boolean>;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  required?: boolean;
}

/** A JSON-Schema-style object as the contract's `paramSchema` shows it. */
export interface ParamSchema {
  type: 'object';
  required?: string[];
  properties: Record<string, Record<string, unknown>>;
  additionalProperties?: boolean;
}

export interface ParamSpec {
  defs: ParamDef[];
  /** Present only when a schema-backed object form can be rendered safely. */
  schema?: ParamSchema;
  /** Declared with types (rich params or JSON Schema): unknown names are then rejected at start. */
  typed?: boolean;
}

/**
 * Resolved run parameters, in declaration order (names of positional params are "1", "2", ...).
 * `evaluate` marks a value that is still an `eval` template, expanded by the engine at run start.
 */
export type ResolvedParams = Array<{ name: string; value: string; evaluate?: boolean }>;

export interface Precondition {
  /** A shell command (its stdout, or its exit code when `expected` is absent) or a value such as `${VAR}`. */
  condition: string;
  /** Compared with the condition's output; `re:` prefix makes it a regular expression. */
  expected?: string;
  negate: boolean;
  /** Message recorded when the precondition is not met. */
  error?: string;
}

export interface ContinueOn {
  failure: boolean;
  skipped: boolean;
  exitCode: number[];
  /** Exact strings or `re:` regular expressions matched against the step's output. */
  output: string[];
  markSuccess: boolean;
}

export interface RetryPolicy {
  limit: number;
  intervalSec: number;
  /** Multiplier applied per attempt; 1 means a constant interval (`backoff: true` is 2.0). */
  backoff: number;
  maxIntervalSec?: number;
  /** Retry only on these exit codes; empty means any failure. */
  exitCode: number[];
}

export interface RepeatPolicy {
  mode: 'while' | 'until';
  intervalSec: number;
  backoff: number;
  maxIntervalSec?: number;
  /** Maximum number of executions; absent means unbounded. */
  limit?: number;
  condition?: string;
  expected?: string;
  exitCode: number[];
}

export interface StepOutput {
  /** Variable name later steps use: `${NAME}`. */
  name: string;
  /** Key in the run's outputs map; default is camelCase of `name`. */
  key?: string;
  /** Excluded from the run's outputs map (still visible to later steps). */
  omit: boolean;
}

export interface ParallelSpec {
  /** Literal items, or a `${VAR}` reference expanded at run time to a JSON array or whitespace list. */
  items: unknown[] | string;
  maxConcurrent: number;
}

export interface ApprovalSpec {
  prompt?: string;
  input: string[];
  required: string[];
}

export interface RouterRoute {
  /** Exact value or `re:` regular expression. */
  pattern: string;
  targets: string[];
}

export interface RouterSpec {
  value: string;
  routes: RouterRoute[];
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** `local` means the coordinator's own executor; labels must all match a worker's (exact values). */
export type WorkerSelector = { kind: 'local' } | { kind: 'labels'; labels: Record<string, string> };

export type SecretProvider = 'env' | 'file';

export interface SecretRef {
  name: string;
  provider: SecretProvider;
  key: string;
  options: Record<string, string>;
}

export interface MailConfig {
  from: string;
  to: string[];
  prefix?: string;
  attachLogs: boolean;
}

export type StepType =
  | 'shell'
  | 'dag'
  | 'router'
  | 'http'
  | 'jq'
  | 'archive'
  | 'mail'
  | 'ssh'
  | 'docker'
  | 's3'
  | 'redis'
  | 'chat'
  | 'agent'
  | 'gha';

export interface Step {
  name: string;
  id?: string;
  description?: string;
  type: StepType;
  /**
   * Commands run one after another through the shell, stopping at the first failure.
   * A multi-line string in YAML is a single entry run as a script. Empty when the step
   * has only `script`, or is a `dag`/`router` step.
   */
  commands: string[];
  script?: string;
  depends: string[];
  workingDir?: string;
  /** Shell program and its arguments, e.g. ['bash', '-e']; absent means the DAG's, then the system shell. */
  shell?: string[];
  stdout?: string;
  stderr?: string;
  logOutput?: LogOutputMode;
  output?: StepOutput;
  env: EnvEntry[];
  /** Sub-DAG name for `call`/`run`/`type: dag` steps. */
  call?: string;
  /** Parameters for a sub-DAG: a shell-style string or a map, as written. */
  params?: string | Record<string, unknown>;
  parallel?: ParallelSpec;
  preconditions: Precondition[];
  continueOn: ContinueOn;
  retryPolicy?: RetryPolicy;
  repeatPolicy?: RepeatPolicy;
  mailOnError: boolean;
  signalOnStop: string;
  /** 0 means no step timeout. */
  timeoutSec: number;
  container?: string | Record<string, unknown>;
  executor?: string | Record<string, unknown>;
  /** Executor configuration (`config:` in YAML), passed as written to the step executor. */
  config: Record<string, unknown>;
  llm?: Record<string, unknown>;
  messages?: ChatMessage[];
  approval?: ApprovalSpec;
  router?: RouterSpec;
  workerSelector?: WorkerSelector;
}

export interface Dag {
  name: string;
  group?: string;
  description?: string;
  labels: string[];
  type: DagType;
  schedule: ScheduleSet;
  skipIfSuccessful: boolean;
  restartWaitSec: number;
  /** Duration string as written (e.g. `6h`), and its value in milliseconds. */
  catchupWindow?: string;
  catchupWindowMs?: number;
  overlapPolicy: OverlapPolicy;
  maxActiveRuns: number;
  maxActiveSteps: number;
  timeoutSec: number;
  delaySec: number;
  maxCleanUpTimeSec: number;
  preconditions: Precondition[];
  runConfig: { disableParamEdit: boolean; disableRunIdEdit: boolean };
  params: ParamSpec;
  env: EnvEntry[];
  secrets: SecretRef[];
  dotenv: string[];
  workingDir?: string;
  shell?: string[];
  logDir?: string;
  logOutput: LogOutputMode;
  histRetentionDays: number;
  maxOutputSize: number;
  container?: string | Record<string, unknown>;
  ssh?: Record<string, unknown>;
  llm?: Record<string, unknown>;
  redis?: Record<string, unknown>;
  smtp?: Record<string, unknown>;
  otel?: Record<string, unknown>;
  /** Global queue name; absent means the DAG-local FIFO queue named after the DAG. */
  queue?: string;
  workerSelector?: WorkerSelector;
  mailOn: { success: boolean; failure: boolean; wait: boolean };
  errorMail?: MailConfig;
  infoMail?: MailConfig;
  waitMail?: MailConfig;
  handlerOn: Partial<Record<HandlerKind, Step>>;
  steps: Step[];
}

/** A local DAG: an extra YAML document in the same file, callable by name from steps. */
export interface LocalDag {
  name: string;
  dag?: Dag;
  errors: string[];
}

/** Result of loading one DAG file: the model when valid, plus every problem found. */
export interface DagLoadResult {
  dag?: Dag;
  localDags: LocalDag[];
  errors: string[];
  /** Settings that are valid but will not take effect (local DAGs' prefixed `local DAG <name>: `). */
  warnings: string[];
}
