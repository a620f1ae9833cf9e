import { NodeStatus, nodeStatusLabel, toStepPayload, type Step, type StepPayload } from '@trellis/core';
import type { NodeSnapshot, SubRunRef } from '../types.js';

/** The mutable state of one step during a run. */
export class NodeState {
  payload: StepPayload;
  status: NodeStatus = NodeStatus.NotStarted;
  startedAt = '';
  finishedAt = '';
  retryCount = 0;
  doneCount = 0;
  error = '';
  exitCode: number | undefined;
  /** Trimmed stdout of the last execution (masked), for `output:` and `continue_on.output`. */
  output = '';
  subRuns: SubRunRef[] = [];
  /** Outputs of the child run of a `dag` step: `${STEP.outputs.key}`. */
  childOutputs: Record<string, string> = {};
  /** Failed, but `continue_on` lets dependents run (and makes the run partially successful). */
  coveredFailure = false;
  /** A router chose another branch: skipped without running. */
  routedOut = false;
  /** An approval step that ran and now waits for a decision. */
  waiting = false;
  inFlight = false;

  constructor(
    readonly step: Step,
    readonly stdoutPath: string,
    readonly stderrPath: string,
  ) {
    this.payload = toStepPayload(step);
  }

  /** Hides secret values a definition holds literally, before the payload is ever reported. */
  maskPayload(mask: (text: string) => string): void {
    this.payload = JSON.parse(mask(JSON.stringify(this.payload))) as StepPayload;
  }

  get finished(): boolean {
    return this.status !== NodeStatus.NotStarted && this.status !== NodeStatus.Running;
  }

  start(): void {
    this.status = NodeStatus.Running;
    this.startedAt = new Date().toISOString();
    this.inFlight = true;
  }

  finish(status: NodeStatus, error = ''): void {
    this.status = status;
    this.error = error;
    this.finishedAt = new Date().toISOString();
    this.inFlight = false;
    this.waiting = false;
  }

  snapshot(): NodeSnapshot {
    return {
      step: this.payload,
      stdout: this.stdoutPath,
      stderr: this.stderrPath,
      startedAt: this.startedAt,
      finishedAt: this.finishedAt,
      status: this.status,
      statusLabel: nodeStatusLabel(this.status),
      retryCount: this.retryCount,
      doneCount: this.doneCount,
      subRuns: this.subRuns.map((s) => ({ ...s })),
      subRunsRepeated: [],
      error: this.error,
    };
  }
}
