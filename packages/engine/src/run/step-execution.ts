import { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { toError, NodeStatus, type Step } from '@trellis/core';
import { LogSink } from '../logs/log-sink.js';
import { FileFollower } from '../logs/file-follower.js';
import { executorFor } from '../executors/registry.js';
import { placeStep, runsInDagContainer } from '../executors/placement.js';
import type { StepExecutionContext, StepExecutionResult, StopRequest } from '../executors/types.js';
import type { NodeState } from './node-state.js';
import { conditionSucceeds, conditionValue, matchesExpected } from './conditions.js';
import { backoffDelayMs, continueCovers, repeatLimitReached, shouldRetry } from './policies.js';
import type { RunHost } from './run-host.js';
import { sleep } from './sleep.js';

interface ExecutionOutcome extends StepExecutionResult {
  timedOut: boolean;
}

/** Receives nothing: steps that write straight to their log files have no stream to feed. */
const discard = new Writable({ write: (_chunk, _encoding, callback) => callback() });

/** Executes one step of a run (or a handler) under its repeat and retry policies, and settles its node. */
export class StepExecution {
  constructor(private readonly host: RunHost) {}

  async runWithPolicies(node: NodeState, env: Record<string, string>): Promise<void> {
    const repeat = node.step.repeatPolicy;
    let outcome: ExecutionOutcome;
    for (;;) {
      outcome = await this.runWithRetries(node, env);
      node.doneCount += 1;
      if (repeat === undefined || outcome.stopped === true || outcome.timedOut || repeatLimitReached(repeat, node.doneCount)) break;
      if (!(await this.shouldRepeat(node, outcome.exitCode, env))) break;
      this.host.emit();
      await sleep(backoffDelayMs(repeat, node.doneCount - 1), this.pauseSignal());
      if (this.stopping()) break;
    }
    this.settle(node, outcome);
    if (node.step.approval !== undefined && node.status === NodeStatus.Success) {
      node.status = NodeStatus.Running;
      node.finishedAt = '';
      node.waiting = true;
      this.host.log(`step "${node.step.name}" waits for approval${node.step.approval.prompt !== undefined ? `: ${node.step.approval.prompt}` : ''}`);
    }
  }

  /** A stop cuts a wait between attempts short, except for handlers, which run to completion. */
  private pauseSignal(): AbortSignal {
    return this.host.inHandlerPhase() ? new AbortController().signal : this.host.stopSignal;
  }

  private stopping(): boolean {
    return this.host.stopReason() !== undefined && !this.host.inHandlerPhase();
  }

  private async shouldRepeat(node: NodeState, exitCode: number, env: Record<string, string>): Promise<boolean> {
    const policy = node.step.repeatPolicy;
    if (policy === undefined) return false;
    let holds: boolean;
    if (policy.condition !== undefined) {
      const ctx = this.host.env.conditionContext(env);
      holds = policy.expected !== undefined ? matchesExpected(await conditionValue(policy.condition, ctx), this.host.env.expand(policy.expected)) : await conditionSucceeds(policy.condition, ctx);
    } else if (policy.exitCode.length > 0) holds = policy.exitCode.includes(exitCode);
    else return true;
    return policy.mode === 'while' ? holds : !holds;
  }

  private async runWithRetries(node: NodeState, env: Record<string, string>): Promise<ExecutionOutcome> {
    for (;;) {
      const outcome = await this.executeOnce(node, env);
      if (outcome.exitCode === 0 || outcome.stopped === true || outcome.timedOut) return outcome;
      if (!shouldRetry(node.step.retryPolicy, node.retryCount, outcome.exitCode) || node.step.retryPolicy === undefined) return outcome;
      const delay = backoffDelayMs(node.step.retryPolicy, node.retryCount);
      node.retryCount += 1;
      this.host.log(`step "${node.step.name}" failed (exit ${outcome.exitCode}); retry ${node.retryCount}/${node.step.retryPolicy.limit} in ${delay} ms`);
      this.host.emit();
      await sleep(delay, this.pauseSignal());
      if (this.stopping()) return { ...outcome, stopped: true };
    }
  }

  /** Turns the last execution into the node's status, continue_on and output variable. */
  private settle(node: NodeState, outcome: ExecutionOutcome): void {
    node.exitCode = outcome.exitCode;
    const output = node.step.output;
    if (output !== undefined) this.host.env.vars.set(output.name, node.output);
    if (outcome.stopped === true && !outcome.timedOut) return node.finish(NodeStatus.Cancelled, this.host.stopReason() === 'dag-timeout' ? 'run timed out' : 'stopped');
    if (outcome.timedOut) return node.finish(NodeStatus.Failed, `step timed out after ${node.step.timeoutSec}s`);
    if (outcome.exitCode === 0) return node.finish(NodeStatus.Success);
    const error = outcome.error ?? `exit status ${outcome.exitCode}`;
    if (continueCovers(node.step.continueOn, outcome.exitCode, node.output)) {
      if (node.step.continueOn.markSuccess) return node.finish(NodeStatus.Success, '');
      node.coveredFailure = true;
    }
    node.finish(NodeStatus.Failed, error);
  }

  private async executeOnce(node: NodeState, stepEnv: Record<string, string>): Promise<ExecutionOutcome> {
    const { step, bound } = this.host.env.expandStep(placeStep(node.step, this.host.options.dag));
    const env = { ...stepEnv, ...bound };
    const direct = this.directFiles(step);
    if (direct !== undefined) return this.executeDirect(node, step, env, direct);
    const dag = this.host.options.dag;
    const merged = (step.logOutput ?? dag.logOutput) === 'merged';
    const capture = dag.maxOutputSize;
    const stdout = this.newSink(node.stdoutPath, `${step.name}/stdout`, capture, step.stdout !== undefined ? this.host.env.resolvePath(step.stdout) : undefined);
    const stderr = merged ? stdout : this.newSink(node.stderrPath, `${step.name}/stderr`, undefined, step.stderr !== undefined ? this.host.env.resolvePath(step.stderr) : undefined);
    const teeError = stdout.teeError ?? stderr.teeError;
    const outcome = teeError !== undefined ? { exitCode: 1, error: teeError, timedOut: false } : await this.invoke(node, step, env, { stdout, stderr });
    await Promise.all([endSink(stdout), merged ? Promise.resolve() : endSink(stderr)]);
    node.output = stdout.capturedText().trim();
    if (stdout.truncated) this.host.log(`output of step "${step.name}" truncated at ${capture} bytes (max_output_size)`);
    return outcome;
  }

  /** One call of the step's executor, under the run's stop signal and the step's timeout. */
  private async invoke(node: NodeState, step: Step, env: Record<string, string>, io: Pick<StepExecutionContext, 'stdout' | 'stderr' | 'files'>): Promise<ExecutionOutcome> {
    const { options, stepControllers } = this.host;
    const controller = new AbortController();
    stepControllers.add(controller);
    const stopReason = this.host.stopReason();
    if (stopReason !== undefined && !this.host.inHandlerPhase()) controller.abort({ kind: stopReason } satisfies StopRequest);
    const timer = step.timeoutSec > 0 ? setTimeout(() => controller.abort({ kind: 'step-timeout' } satisfies StopRequest), step.timeoutSec * 1000) : undefined;
    let result: StepExecutionResult;
    try {
      result = await executorFor(step.type).run({
        step,
        env,
        workingDir: this.host.env.workingDirOf(node.step),
        shell: step.shell ?? options.dag.shell ?? ['sh'],
        ...io,
        ...(options.launcher !== undefined ? { launch: options.launcher } : {}),
        signal: controller.signal,
        stopSignal: step.signalOnStop as NodeJS.Signals,
        killAfterMs: options.dag.maxCleanUpTimeSec * 1000,
        positionalParams: this.host.env.positional,
        runResources: this.host.resources,
        ...(runsInDagContainer(node.step, options.dag) ? { inDagContainer: true } : {}),
        ...this.dagDefaultsOf(step),
      });
    } catch (error) {
      result = { exitCode: 1, error: toError(error).message };
    } finally {
      clearTimeout(timer);
      stepControllers.delete(controller);
    }
    const reason = (controller.signal.reason as StopRequest | undefined)?.kind;
    return { ...result, stopped: result.stopped === true || controller.signal.aborted, timedOut: reason === 'step-timeout' };
  }

  /** Typed steps that talk to a service start from the DAG's settings for it, with `${...}` expanded when the step runs. */
  private dagDefaultsOf(step: Step): Pick<StepExecutionContext, 'dagDefaults'> {
    const dag = this.host.options.dag;
    const defaults = step.type === 'redis' ? dag.redis : step.type === 'mail' ? dag.smtp : undefined;
    if (defaults === undefined) return {};
    return { dagDefaults: this.host.env.expandDeepWith(defaults, (text) => this.host.env.expand(text)) as Record<string, unknown> };
  }

  /**
   * Shell steps whose output nobody needs to see in Node (no capture, no masking, no copy to a
   * user file) write straight to their log files; a streaming host gets their bytes by reading.
   */
  private directFiles(step: Step): { merged: boolean } | undefined {
    if (this.host.env.masker.active || step.type !== 'shell') return undefined;
    if (step.output !== undefined || step.continueOn.output.length > 0 || step.stdout !== undefined || step.stderr !== undefined) return undefined;
    return { merged: (step.logOutput ?? this.host.options.dag.logOutput) === 'merged' };
  }

  private async executeDirect(node: NodeState, step: Step, env: Record<string, string>, direct: { merged: boolean }): Promise<ExecutionOutcome> {
    const files = { stdoutPath: node.stdoutPath, stderrPath: direct.merged ? node.stdoutPath : node.stderrPath };
    const follower = this.host.options.streamLogs !== false ? this.followerOf(node, step, direct) : undefined;
    try {
      return await this.invoke(node, step, env, { stdout: discard, stderr: discard, files });
    } finally {
      follower?.finish();
    }
  }

  /** A host that streams logs hears of what the process wrote by the files being read. */
  private followerOf(node: NodeState, step: Step, direct: { merged: boolean }): FileFollower {
    const targets = [{ path: node.stdoutPath, stream: `${step.name}/stdout` }];
    if (!direct.merged) targets.push({ path: node.stderrPath, stream: `${step.name}/stderr` });
    return new FileFollower(this.host.options.reporter, targets);
  }

  private newSink(path: string, stream: string, captureBytes?: number, teePath?: string): LogSink {
    return new LogSink({ path, stream, reporter: this.host.options.reporter, masker: this.host.env.masker, ...(captureBytes !== undefined ? { captureBytes } : {}), ...(teePath !== undefined ? { teePath } : {}) });
  }
}

async function endSink(sink: LogSink): Promise<void> {
  sink.end();
  await finished(sink).catch(() => undefined);
}
