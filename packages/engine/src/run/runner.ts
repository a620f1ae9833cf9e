import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  BadRequestError,
  toError,
  NodeStatus,
  RunStatus,
  confinedPath,
  isTerminalRunStatus,
  nameSegment,
  outputsStatusWord,
  runStatusLabel,
  type Dag,
  type HandlerKind,
  type Step,
} from '@trellis/core';
import type { ApprovalInputs, RunOptions, RunOutputs, RunResult, RunSnapshot, SubRunHandle } from '../types.js';
import { RunLogFile } from '../logs/run-log-file.js';
import type { StopRequest } from '../executors/types.js';
import { NodeState } from './node-state.js';
import { evaluateAll, matchesExpected } from './conditions.js';
import { outputKey } from './outputs.js';
import { RunEnvironment } from './run-environment.js';
import { RunResources } from './run-resources.js';
import type { RunHost } from './run-host.js';
import { StepExecution } from './step-execution.js';
import { SubDags } from './sub-dags.js';
import { sleep } from './sleep.js';
import { MailNotices, type RunSummary } from './mail-notices.js';

/** An approval or rejection the run cannot take: missing inputs, or a step not waiting. */
export class ApprovalError extends BadRequestError {}

export interface RunHandle {
  readonly done: Promise<RunResult>;
  /** Aborts the run; `reason`, when given, becomes the run's error (why it was stopped). */
  stop(reason?: string): void;
  approve(stepName: string, inputs?: ApprovalInputs): void;
  reject(stepName: string, reason?: string): void;
  snapshot(): RunSnapshot;
}

/**
 * The log directory, then the work directory. The host has usually made the log directory's
 * parent already; a plain mkdir first saves the failed call and the error object a recursive
 * mkdir of a missing parent starts with.
 */
function makeRunDirectories(logDir: string, workDir: string): void {
  try {
    mkdirSync(logDir);
  } catch {
    mkdirSync(logDir, { recursive: true });
  }
  mkdirSync(workDir, { recursive: true });
}

/** Runs one attempt of one DAG run on this host. */
export class DagRunner implements RunHandle {
  readonly done: Promise<RunResult>;
  private readonly dag: Dag;
  private readonly nodes: NodeState[];
  private readonly byName = new Map<string, NodeState>();
  private readonly byRef = new Map<string, NodeState>();
  private readonly handlerNodes = new Map<HandlerKind, NodeState>();
  private readonly stopController = new AbortController();
  private readonly stepControllers = new Set<AbortController>();
  private readonly children = new Set<SubRunHandle>();
  private readonly resources = new RunResources();
  private readonly workDir: string;
  private readonly runLogPath: string;
  private readonly env: RunEnvironment;
  private readonly steps: StepExecution;
  private readonly subDags: SubDags;
  private readonly notices: MailNotices;
  /** Notices sent while the run goes on (a wait); the run ends after them. */
  private readonly pendingNotices = new Set<Promise<void>>();
  private runLog: RunLogFile | undefined;
  private status: RunStatus = RunStatus.NotStarted;
  private startedAt = '';
  private finishedAt = '';
  private error = '';
  private stopReason: StopRequest['kind'] | undefined;
  /** Why the run was stopped, when the caller said (the run's error once it is aborted). */
  private stopMessage = '';
  private rejected = false;
  /** The DAG's preconditions held back the whole run: no outcome handler runs for it. */
  private notRun = false;
  private waitHandler: Promise<boolean> | undefined;
  private pumpWaiter: (() => void) | undefined;
  /** After the steps, handlers run to completion even though the run was stopped. */
  private handlerPhase = false;

  constructor(private readonly options: RunOptions) {
    this.dag = options.dag;
    this.workDir = options.workDir ?? join(options.logDir, 'work');
    this.runLogPath = join(options.logDir, 'run.log');
    this.nodes = this.dag.steps.map((step) => this.newNode(step));
    for (const node of this.nodes) {
      this.byName.set(node.step.name, node);
      this.byRef.set(node.step.name, node);
      if (node.step.id !== undefined) this.byRef.set(node.step.id, node);
    }
    this.env = new RunEnvironment(options, this.workDir, this.runLogPath, this.byRef);
    const host = this.host();
    this.steps = new StepExecution(host);
    this.subDags = new SubDags(host);
    this.notices = new MailNotices({
      dag: this.dag,
      smtp: () => (this.dag.smtp === undefined ? undefined : (this.env.expandDeepWith(this.dag.smtp, (text) => this.env.expand(text)) as Record<string, unknown>)),
      mask: (text) => this.env.masker.mask(text),
      log: (message) => this.log(message),
    });
    this.done = this.run();
  }

  /** What step execution and sub-DAG steps see of this run. */
  private host(): RunHost {
    return {
      options: this.options,
      env: this.env,
      stopSignal: this.stopController.signal,
      stepControllers: this.stepControllers,
      children: this.children,
      resources: this.resources,
      stopReason: () => this.stopReason,
      inHandlerPhase: () => this.handlerPhase,
      log: (message) => this.log(message),
      emit: () => this.emit(),
    };
  }

  stop(reason?: string): void {
    if (this.stopReason === undefined && this.finishedAt === '' && reason !== undefined) this.stopMessage = reason;
    this.requestStop('stop');
  }

  snapshot(): RunSnapshot {
    const handlers: Record<string, ReturnType<NodeState['snapshot']>> = {};
    for (const [kind, node] of this.handlerNodes) handlers[kind] = node.snapshot();
    const id = this.options.identity;
    return {
      ...id,
      status: this.reportedStatus(),
      statusLabel: runStatusLabel(this.reportedStatus()),
      startedAt: this.startedAt,
      finishedAt: this.finishedAt,
      log: this.runLogPath,
      params: JSON.stringify(this.options.params.map(({ name, value }) => ({ name, value: this.env.masker.mask(value) }))),
      error: this.env.masker.mask(this.error),
      nodes: this.nodes.map((n) => n.snapshot()),
      handlers,
      waitingSteps: this.nodes.filter((n) => n.waiting).map((n) => n.step.name),
    };
  }

  /**
   * The outcome is decided before the handlers run, but reported only when finish() ends the run:
   * a host that saw a terminal status would record the run as over and refuse the handlers' reports.
   */
  private reportedStatus(): RunStatus {
    return this.finishedAt === '' && isTerminalRunStatus(this.status) ? RunStatus.Running : this.status;
  }

  approve(stepName: string, inputs: ApprovalInputs = {}): void {
    const node = this.waitingNode(stepName);
    const missing = (node.step.approval?.required ?? []).filter((name) => (inputs[name] ?? '').trim() === '');
    if (missing.length > 0) throw new ApprovalError(`missing required input: ${missing.join(', ')}`);
    const allowed = new Set(node.step.approval?.input ?? []);
    for (const [name, value] of Object.entries(inputs)) if (allowed.has(name)) this.env.vars.set(name, value);
    this.log(`step "${stepName}" approved`);
    node.finish(NodeStatus.Success);
    this.resumeAfterWait();
  }

  reject(stepName: string, reason = ''): void {
    const node = this.waitingNode(stepName);
    this.rejected = true;
    this.log(`step "${stepName}" rejected${reason !== '' ? `: ${reason}` : ''}`);
    node.finish(NodeStatus.Failed, reason !== '' ? `rejected: ${reason}` : 'rejected');
    this.resumeAfterWait();
  }

  private waitingNode(stepName: string): NodeState {
    const node = this.byName.get(stepName);
    if (node === undefined) throw new ApprovalError(`no step "${stepName}" in this run`);
    if (!node.waiting) throw new ApprovalError(`step "${stepName}" is not waiting for approval`);
    return node;
  }

  private resumeAfterWait(): void {
    if (this.status === RunStatus.Waiting) this.status = RunStatus.Running;
    this.emit();
    this.pump();
  }

  private newNode(step: Step): NodeState {
    const file = (ext: string): string => confinedPath(this.options.logDir, `${nameSegment(step.name)}.${ext}`);
    const mode = step.logOutput ?? this.dag.logOutput;
    return new NodeState(step, file('out'), mode === 'merged' ? file('out') : file('err'));
  }

  // ---- the run ------------------------------------------------------------------------

  private async run(): Promise<RunResult> {
    this.status = RunStatus.Running;
    this.startedAt = new Date().toISOString();
    let dagTimer: NodeJS.Timeout | undefined;
    try {
      // Synchronous on purpose: a create in a fresh directory takes tens of microseconds, less
      // than the thread-pool round trip of the async call, and the first step waits for it.
      makeRunDirectories(this.options.logDir, this.workDir);
      this.runLog = new RunLogFile(this.runLogPath, this.options.reporter);
      this.log(`run ${this.options.identity.dagRunId} of ${this.dag.name} started (attempt ${this.options.identity.attemptId})`);
      await this.env.prepare(this.nodes);
      this.emit();
      if (this.dag.timeoutSec > 0) dagTimer = setTimeout(() => this.requestStop('dag-timeout'), this.dag.timeoutSec * 1000);
      await sleep(this.dag.delaySec * 1000, this.stopController.signal);
      await this.runBody();
    } catch (error) {
      this.error = toError(error).message;
      this.status = RunStatus.Failed;
      this.log(`run failed: ${this.error}`);
    } finally {
      clearTimeout(dagTimer);
    }
    return this.finish();
  }

  private async runBody(): Promise<void> {
    if (this.stopReason !== undefined) {
      for (const node of this.nodes) node.finish(NodeStatus.Cancelled, this.cancelReason());
      this.status = this.finalStatus();
      return;
    }
    const pre = await evaluateAll(this.dag.preconditions, this.env.conditionContext(this.env.baseEnv));
    if (!pre.met) {
      this.status = RunStatus.Aborted;
      this.notRun = true;
      this.error = pre.reason;
      this.log(`not run: ${pre.reason}`);
      return;
    }
    if ((await this.runHandler('init')) === false) {
      for (const node of this.nodes) node.finish(NodeStatus.Cancelled, 'init handler failed');
      this.status = RunStatus.Failed;
      this.error = 'init handler failed';
      return;
    }
    await this.runSteps();
    this.status = this.finalStatus();
  }

  /**
   * The handler of the outcome, then `exit`, whatever ended the run: a failure before any step
   * (an unresolvable secret, a failed init handler) runs the failure handler too.
   */
  private async finish(): Promise<RunResult> {
    this.handlerPhase = true;
    if (this.status === RunStatus.Running || this.status === RunStatus.Waiting) this.status = RunStatus.Failed;
    try {
      // A wait handler still running when the run ends belongs to this run: it ends before the run does.
      await this.waitHandler;
      if (!this.notRun) await this.runOutcomeHandler();
      await this.runHandler('exit');
    } finally {
      // The run's shared container goes whatever ended the run, a host's reporter that threw in
      // the handler phase too; a failure to remove it is only logged.
      for (const failure of await this.resources.releaseAll()) this.log(`releasing a shared resource failed: ${failure}`);
    }
    this.finishedAt = new Date().toISOString();
    this.log(`run finished: ${runStatusLabel(this.status)}${this.error !== '' ? ` (${this.error})` : ''}`);
    await Promise.all(this.pendingNotices);
    await this.notices.runEnded(this.summary());
    const outputs = this.collectOutputs();
    this.options.reporter.onOutputs(outputs);
    this.runLog?.close();
    const snapshot = this.snapshot();
    this.options.reporter.onStatus(snapshot);
    return { status: this.status, snapshot, outputs };
  }

  private async runOutcomeHandler(): Promise<void> {
    const handler = this.status === RunStatus.Success || this.status === RunStatus.PartialSuccess ? 'success' : this.status === RunStatus.Failed ? 'failure' : 'abort';
    if ((await this.runHandler(handler)) === false && handler === 'success') {
      this.status = RunStatus.Failed;
      this.error = 'success handler failed';
    }
  }

  private finalStatus(): RunStatus {
    if (this.rejected) return RunStatus.Rejected;
    if (this.stopReason === 'stop') {
      if (this.stopMessage !== '') this.error = this.stopMessage;
      return RunStatus.Aborted;
    }
    if (this.stopReason === 'dag-timeout') {
      this.error = `run timed out after ${this.dag.timeoutSec}s`;
      return RunStatus.Failed;
    }
    const failed = this.nodes.some((n) => (n.status === NodeStatus.Failed && !n.coveredFailure) || n.status === NodeStatus.Cancelled);
    if (failed) return RunStatus.Failed;
    const covered = this.nodes.some((n) => n.coveredFailure);
    if (!covered) return RunStatus.Success;
    return this.nodes.some((n) => n.status === NodeStatus.Success) ? RunStatus.PartialSuccess : RunStatus.Failed;
  }

  private requestStop(kind: StopRequest['kind']): void {
    if (this.stopReason !== undefined || this.finishedAt !== '') return;
    this.stopReason = kind;
    this.log(kind === 'stop' ? 'stop requested' : `run timed out after ${this.dag.timeoutSec}s: stopping`);
    this.stopController.abort({ kind });
    for (const controller of this.stepControllers) controller.abort({ kind } satisfies StopRequest);
    for (const child of this.children) child.stop();
    for (const node of this.nodes) if (node.waiting) node.finish(NodeStatus.Cancelled, 'run stopped while waiting for approval');
    this.pump();
  }

  // ---- logs ------------------------------------------------------------------------------

  private log(message: string): void {
    this.runLog?.append(`${new Date().toISOString()} ${this.env.masker.mask(message)}\n`);
  }

  private summary(): RunSummary {
    return { dagRunId: this.options.identity.dagRunId, status: this.status, startedAt: this.startedAt, finishedAt: this.finishedAt, error: this.env.masker.mask(this.error), nodes: this.nodes, runLogPath: this.runLogPath };
  }

  private async noticeStepFailure(node: NodeState): Promise<void> {
    if (node.step.mailOnError && node.status === NodeStatus.Failed) await this.notices.stepFailed(node, this.options.identity);
  }

  private emit(): void {
    this.options.reporter.onStatus(this.snapshot());
  }

  // ---- scheduling ------------------------------------------------------------------------

  private runSteps(): Promise<void> {
    return new Promise((resolveSteps) => {
      this.pumpWaiter = resolveSteps;
      this.pump();
    });
  }

  /** Starts what can start, settles what can never run, and ends the step phase when nothing is left. */
  private pump(): void {
    if (this.pumpWaiter === undefined) return;
    let progressed = true;
    while (progressed) {
      progressed = false;
      for (const node of this.nodes) {
        if (node.status !== NodeStatus.NotStarted || node.inFlight) continue;
        const decision = this.readiness(node);
        if (decision === 'wait') continue;
        if (decision === 'run') {
          if (this.running() >= this.dag.maxActiveSteps) continue;
          node.start();
          this.emit();
          void this.executeNode(node).finally(() => this.pump());
          continue;
        }
        node.finish(decision === 'skip' ? NodeStatus.Skipped : NodeStatus.Cancelled, decision === 'skip' ? (node.routedOut ? 'not chosen by router' : 'upstream step was skipped') : this.cancelReason());
        this.emit();
        progressed = true;
      }
    }
    this.updateWaiting();
    if (this.nodes.every((n) => n.finished)) {
      const waiter = this.pumpWaiter;
      this.pumpWaiter = undefined;
      waiter();
    }
  }

  private cancelReason(): string {
    if (this.rejected) return 'run rejected';
    return this.stopReason !== undefined ? 'run stopped' : 'upstream step failed';
  }

  private running(): number {
    return this.nodes.filter((n) => n.inFlight && !n.waiting).length;
  }

  private readiness(node: NodeState): 'run' | 'skip' | 'cancel' | 'wait' {
    if (this.stopReason !== undefined || this.rejected) return 'cancel';
    if (node.routedOut) return 'skip';
    let skip = false;
    for (const name of node.step.depends) {
      const dep = this.byName.get(name);
      if (dep === undefined) continue;
      if (!dep.finished) return 'wait';
      if (dep.status === NodeStatus.Cancelled) return 'cancel';
      if (dep.status === NodeStatus.Failed && !dep.coveredFailure) return 'cancel';
      if (dep.status === NodeStatus.Skipped && !dep.step.continueOn.skipped) skip = true;
    }
    return skip ? 'skip' : 'run';
  }

  /** The run waits when a step waits for approval and nothing else can move. */
  private updateWaiting(): void {
    const waiting = this.nodes.some((n) => n.waiting);
    if (waiting && this.running() === 0 && this.status === RunStatus.Running) {
      this.status = RunStatus.Waiting;
      this.log('waiting for approval');
      if (this.dag.mailOn.wait) this.track(this.notices.waiting(this.summary(), this.nodes.filter((n) => n.waiting).map((n) => n.step.name)));
      this.emit();
      this.waitHandler ??= this.runHandler('wait');
    }
  }

  private track(notice: Promise<void>): void {
    this.pendingNotices.add(notice);
    void notice.finally(() => this.pendingNotices.delete(notice));
  }

  // ---- one node -----------------------------------------------------------------------------

  private async executeNode(node: NodeState): Promise<void> {
    const env = this.env.stepEnv(node);
    this.log(`step "${node.step.name}" started`);
    try {
      const pre = await evaluateAll(node.step.preconditions, this.env.conditionContext(env));
      if (!pre.met) {
        node.finish(NodeStatus.Skipped, pre.reason);
        this.log(`step "${node.step.name}" skipped: ${pre.reason}`);
      } else if (node.step.type === 'router') this.route(node);
      else if (node.step.type === 'dag' || node.step.parallel !== undefined) await this.subDags.run(node);
      else await this.steps.runWithPolicies(node, env);
    } catch (error) {
      node.finish(NodeStatus.Failed, toError(error).message);
    }
    if (!node.waiting) this.log(`step "${node.step.name}" finished: ${node.snapshot().statusLabel}${node.error !== '' ? ` (${node.error})` : ''}`);
    await this.noticeStepFailure(node);
    this.emit();
  }

  private route(node: NodeState): void {
    const router = node.step.router;
    if (router === undefined) return node.finish(NodeStatus.Failed, 'router step has no routes');
    const value = this.env.expand(router.value);
    const chosen = router.routes.find((route) => matchesExpected(value, route.pattern));
    const targets = new Set(chosen?.targets ?? []);
    for (const route of router.routes) {
      for (const target of route.targets) {
        const targetNode = this.byName.get(target);
        if (targetNode !== undefined && !targets.has(target)) targetNode.routedOut = true;
      }
    }
    this.log(`router "${node.step.name}": value "${value}" -> ${chosen !== undefined ? chosen.targets.join(', ') : 'no route'}`);
    node.finish(NodeStatus.Success);
  }

  // ---- handlers and outputs ---------------------------------------------------------------

  /** Runs a lifecycle handler if the DAG has one; false when it failed. */
  private async runHandler(kind: HandlerKind): Promise<boolean> {
    const step = this.dag.handlerOn[kind];
    if (step === undefined || this.runLog === undefined) return true;
    const node = this.newNode(step);
    if (this.env.masker.active) node.maskPayload((text) => this.env.masker.mask(text));
    this.handlerNodes.set(kind, node);
    node.start();
    this.emit();
    this.log(`handler ${kind} started`);
    try {
      await this.steps.runWithPolicies(node, this.env.stepEnv(node));
    } catch (error) {
      // A handler that ran ends in the record, whatever went wrong in it.
      node.finish(NodeStatus.Failed, toError(error).message);
    }
    this.log(`handler ${kind} finished: ${node.snapshot().statusLabel}`);
    await this.noticeStepFailure(node);
    this.emit();
    return node.status === NodeStatus.Success;
  }

  private collectOutputs(): RunOutputs {
    const outputs: Record<string, string> = {};
    for (const node of this.nodes) {
      const output = node.step.output;
      if (output === undefined || output.omit || node.status === NodeStatus.NotStarted) continue;
      outputs[output.key ?? outputKey(output.name)] = this.env.masker.mask(node.output);
    }
    const id = this.options.identity;
    return {
      metadata: {
        dagName: id.dagName,
        dagRunId: id.dagRunId,
        attemptId: id.attemptId,
        status: outputsStatusWord(this.status),
        completedAt: this.finishedAt,
        params: JSON.stringify(this.options.params.map(({ name, value }) => ({ name, value: this.env.masker.mask(value) }))),
      },
      outputs,
    };
  }
}

/** Starts one attempt of one DAG run; the handle stops, approves, rejects and awaits it. */
export function runDag(options: RunOptions): RunHandle {
  return new DagRunner(options);
}
