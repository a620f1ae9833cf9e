import type { Dag, NodeStatus, ResolvedParams, RunIdentity, RunStatus, WorkerSelector } from '@trellis/core';
import type { StepPayload } from '@trellis/core';
import type { ProcessLauncher } from './executors/process-group.js';

/** A child run as the node records it. */
export interface SubRunRef {
  dagRunId: string;
  name: string;
  params: string;
  status: RunStatus;
  statusLabel: string;
}

/** The contract's Node, as the engine reports it. Timestamps are RFC 3339 or "". */
export interface NodeSnapshot {
  step: StepPayload;
  stdout: string;
  stderr: string;
  startedAt: string;
  finishedAt: string;
  status: NodeStatus;
  statusLabel: string;
  retryCount: number;
  doneCount: number;
  subRuns: SubRunRef[];
  subRunsRepeated: SubRunRef[];
  error: string;
}

export type { RunIdentity } from '@trellis/core';

/** Everything the engine knows about the run, sent whole on every change (idempotent by design). */
export interface RunSnapshot extends RunIdentity {
  status: RunStatus;
  statusLabel: string;
  startedAt: string;
  finishedAt: string;
  /** Path of the run log. */
  log: string;
  /** JSON of the resolved params. */
  params: string;
  error: string;
  nodes: NodeSnapshot[];
  /** Handler nodes by kind (init, success, failure, abort, wait, exit) once they ran. */
  handlers: Record<string, NodeSnapshot>;
  /** Steps currently waiting for approval. */
  waitingSteps: string[];
}

export interface LogChunk {
  /** "run", or "<step>/stdout", "<step>/stderr". */
  stream: string;
  /** The file the bytes were appended to, and their byte offset in it. */
  path: string;
  offset: number;
  data: Buffer;
}

export interface OutputsMetadata {
  dagName: string;
  dagRunId: string;
  attemptId: string;
  status: string;
  completedAt: string;
  params: string;
}

export interface RunOutputs {
  metadata: OutputsMetadata;
  outputs: Record<string, string>;
}

/**
 * How a host hears about a run. Calls are synchronous and ordered; a host that persists or
 * sends them over the network queues them itself. Every snapshot is complete, so applying
 * the latest one is always correct and a repeated one is harmless.
 */
export interface RunReporter {
  onStatus(snapshot: RunSnapshot): void;
  onLog(chunk: LogChunk): void;
  onOutputs(outputs: RunOutputs): void;
}

/** What the engine asks of its host to run a sub-DAG (so the coordinator can dispatch it anywhere). */
export interface SubRunRequest {
  /** Name of the DAG to run (a stored DAG, or a local DAG of the parent's file). */
  dagName: string;
  /** The child's definition when the parent's file holds it (local DAGs). */
  localDag?: Dag;
  dagRunId: string;
  /** Shell-style or JSON params for the child. */
  params: string;
  parent: RunIdentity;
  workerSelector?: WorkerSelector;
  /** Extra env for the child (ITEM for parallel items). */
  env: Record<string, string>;
  /**
   * The parent's secret values that its params or env carry: the child masks them wherever it
   * shows them (logs, status, outputs), and a host records its params with them masked.
   */
  maskValues: string[];
}

export interface SubRunResult {
  status: RunStatus;
  outputs: Record<string, string>;
  error?: string;
}

export interface SubRunHandle {
  done: Promise<SubRunResult>;
  /** Stops the child (the parent was stopped). */
  stop(): void;
}

export type SubRunLauncher = (request: SubRunRequest) => SubRunHandle;

export interface EngineEnvironment {
  /** The host's environment; only the allowlist reaches steps. Default: process.env. */
  hostEnv?: NodeJS.ProcessEnv;
  /** Extra variable names and prefixes forwarded to steps (server settings). */
  envPassthrough?: string[];
  envPassthroughPrefixes?: string[];
  /** DAG_DOCS_DIR; unset when empty. */
  docsDir?: string;
}

export interface RunOptions extends EngineEnvironment {
  dag: Dag;
  /** Local DAGs of the definition's file, callable by name. */
  localDags?: Dag[];
  params: ResolvedParams;
  identity: RunIdentity;
  /** The run's log directory (created if missing). */
  logDir: string;
  /** Per-run work directory (DAG_RUN_WORK_DIR); default `<logDir>/work`. */
  workDir?: string;
  /** Run-level env from the host (profile variables), applied after the DAG's env. */
  env?: Record<string, string>;
  /** Secret values from the host (profile secrets), masked everywhere. */
  secrets?: Record<string, string>;
  /** Further values to mask everywhere, not set as variables: a parent's secrets handed in through params. */
  maskValues?: string[];
  reporter: RunReporter;
  launchSubRun?: SubRunLauncher;
  /** Directory that relative `dotenv` paths and `working_dir` resolve against (the DAG file's folder). */
  baseDir?: string;
  /**
   * Dotenv files the host already read from the DAG file's folder, by the `dotenv` entry naming
   * them (a worker, whose coordinator has the file): used as if found in `baseDir`.
   */
  dotenvFiles?: Record<string, string>;
  /**
   * Report every log chunk to the reporter (default true: a worker streams them, the coordinator
   * stores them); a host that needs only the files (the engine's own benches) turns it off. Either way, steps that need
   * no capture or masking write straight to their files, without passing through Node; when
   * streaming, the engine reads what they appended (as it comes, and when they end).
   */
  streamLogs?: boolean;
  /**
   * Starts step processes. Default: spawned by this process. A host with a large heap passes a
   * ProcessSpawner's `launch`: forking costs in proportion to the forking process's memory.
   */
  launcher?: ProcessLauncher;
}

export interface RunResult {
  status: RunStatus;
  snapshot: RunSnapshot;
  outputs: RunOutputs;
}

export interface ApprovalInputs {
  [name: string]: string;
}
