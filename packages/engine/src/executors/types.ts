import type { Writable } from 'node:stream';
import type { Step, StepType } from '@trellis/core';
import type { DirectLogFiles, ProcessLauncher } from './process-group.js';
import type { RunResources } from '../run/run-resources.js';

/**
 * What the runner hands a step executor for one execution of one step (a retry or a
 * repeat is a new execution). Variables in the step's fields are already expanded.
 */
export interface StepExecutionContext {
  step: Step;
  /** The complete environment the step sees (filtered host env, DAG env, step env, outputs, secrets). */
  env: Record<string, string>;
  workingDir: string;
  /** Shell program and arguments to use for shell-like execution (already resolved: step, DAG, system). */
  shell: string[];
  /** The step's log sinks. With `log_output: merged` both point at the same file. */
  stdout: Writable;
  stderr: Writable;
  /**
   * Aborted when the step must stop (run stopped, step or DAG timeout). `reason` is a StopRequest.
   * Executors that own child processes must also honour `stopSignal` and kill their process group.
   */
  signal: AbortSignal;
  /** Signal to send first when stopping (the step's `signal_on_stop`, default SIGTERM). */
  stopSignal: NodeJS.Signals;
  /** How long to wait after `stopSignal` before SIGKILL of the whole process group. */
  killAfterMs: number;
  /** Positional params ($1, $2, ...) for shell commands. */
  positionalParams?: string[];
  /** Log files a process may write to directly (then `stdout`/`stderr` receive nothing). */
  files?: DirectLogFiles;
  /** Starts the step's processes; default: spawned by this process. */
  launch?: ProcessLauncher;
  /** The DAG-level settings of the step's type, expanded: `redis` for redis steps, `smtp` for mail steps. */
  dagDefaults?: Record<string, unknown>;
  /** What the steps of this run share; absent when the step runs outside a run. */
  runResources?: RunResources;
  /** The step runs in the DAG-level image-mode container, one container for the whole run. */
  inDagContainer?: boolean;
}

export interface StopRequest {
  kind: 'stop' | 'step-timeout' | 'dag-timeout';
}

export interface StepExecutionResult {
  /** 0 for success. Executors without a process map failure to 1. */
  exitCode: number;
  /** Set when the execution failed for a reason the user should read (shown as the node's error). */
  error?: string;
  /** True when the execution ended because `signal` was aborted. */
  stopped?: boolean;
}

/** One module per step type registers one of these in the executor registry. */
export interface StepExecutor {
  readonly type: StepType;
  run(ctx: StepExecutionContext): Promise<StepExecutionResult>;
}
