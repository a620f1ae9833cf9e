import { closeSync, mkdirSync, openSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { isAbsolute, join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import {
  BadRequestError,
  MAIL_UNAVAILABLE,
  NodeStatus,
  RunStatus,
  confinedPath,
  expandForShell,
  expandReferences,
  isReservedParamName,
  isTerminalRunStatus,
  nameSegment,
  outputsStatusWord,
  readJsonPath,
  runStatusLabel,
  toError,
  type Dag,
  type HandlerKind,
  type Step,
} from '@trellis/core';
import type { ApprovalInputs, RunOptions, RunOutputs, RunResult, RunSnapshot, SubRunHandle } from '../types.js';
import { LogSink } from '../logs/log-sink.js';
import { RunLogFile } from '../logs/run-log-file.js';
import { FileFollower } from '../logs/file-follower.js';
import { SecretMasker } from '../logs/secret-masker.js';
import { executorFor } from '../executors/registry.js';
import { shellParsedTexts } from '../executors/shell.js';
import type { StepExecutionContext, StepExecutionResult, StopRequest } from '../executors/types.js';
import { NodeState } from './node-state.js';
import { filterHostEnv, loadDotenv, resolveSecrets } from './environment.js';
import { evaluateAll, conditionSucceeds, conditionValue, matchesExpected, type ConditionContext } from './conditions.js';
import { backoffDelayMs, continueCovers, repeatLimitReached, shouldRetry } from './policies.js';
import { outputKey } from './outputs.js';

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

interface ExecutionOutcome extends StepExecutionResult {
  timedOut: boolean;
}

/** Receives nothing: steps that write straight to their log files have no stream to feed. */
const discard = new Writable({ write: (_chunk, _encoding, callback) => callback() });

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

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolveSleep) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolveSleep();
    }
    signal.addEventListener('abort', done, { once: true });
  });
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
  private readonly vars = new Map<string, string>();
  private readonly workDir: string;
  private readonly runLogPath: string;
  private masker = new SecretMasker([]);
  private baseEnv: Record<string, string> = {};
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
  /** Positional params, passed to shell commands as $1, $2, ... */
  private positional: string[] = [];
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
    this.done = this.run();
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
      params: JSON.stringify(this.options.params.map(({ name, value }) => ({ name, value: this.masker.mask(value) }))),
      error: this.masker.mask(this.error),
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
    for (const [name, value] of Object.entries(inputs)) if (allowed.has(name)) this.vars.set(name, value);
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
      await this.prepareEnvironment();
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
    const pre = await evaluateAll(this.dag.preconditions, this.conditionContext(this.baseEnv));
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
    // A wait handler still running when the run ends belongs to this run: it ends before the run does.
    await this.waitHandler;
    if (!this.notRun) await this.runOutcomeHandler();
    await this.runHandler('exit');
    this.finishedAt = new Date().toISOString();
    this.log(`run finished: ${runStatusLabel(this.status)}${this.error !== '' ? ` (${this.error})` : ''}`);
    if (this.dag.mailOn.success && (this.status === RunStatus.Success || this.status === RunStatus.PartialSuccess)) this.logUnsentMail('the successful run', 'mail_on.success');
    if (this.dag.mailOn.failure && this.status === RunStatus.Failed) this.logUnsentMail('the failed run', 'mail_on.failure');
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

  // ---- environment ----------------------------------------------------------------------

  private async prepareEnvironment(): Promise<void> {
    const host = this.options.hostEnv ?? process.env;
    const id = this.options.identity;
    const env: Record<string, string> = {
      ...filterHostEnv(host, this.options.envPassthrough, this.options.envPassthroughPrefixes),
      DAG_NAME: this.dag.name,
      DAG_RUN_ID: id.dagRunId,
      DAG_RUN_LOG_FILE: this.runLogPath,
      DAG_RUN_WORK_DIR: this.workDir,
    };
    if (this.options.docsDir !== undefined && this.options.docsDir !== '') env.DAG_DOCS_DIR = confinedPath(this.options.docsDir, nameSegment(this.dag.name));
    else delete env.DAG_DOCS_DIR;
    for (const [k, v] of Object.entries(env)) this.vars.set(k, v);
    // Set before anything here can fail: the handlers of a run that fails now still get this much.
    this.baseEnv = env;
    const secrets = { ...(await resolveSecrets(this.dag.secrets, host, this.options.baseDir ?? this.workDir)), ...(this.options.secrets ?? {}) };
    this.masker = new SecretMasker([...Object.values(secrets), ...(this.options.maskValues ?? [])]);
    if (this.masker.active) for (const node of this.nodes) node.maskPayload((text) => this.masker.mask(text));
    const dotenvDirs = [...(this.options.baseDir !== undefined ? [this.options.baseDir] : []), this.workingDirOf(undefined)];
    if (this.dag.dotenv.length > 0) this.setAll(env, await loadDotenv(this.dag.dotenv, dotenvDirs, this.options.dotenvFiles));
    for (const entry of this.dag.env) this.setVar(env, entry.key, this.expand(entry.value));
    const positional: string[] = [];
    this.refuseReservedParams();
    for (const param of this.options.params) {
      const value = param.evaluate === true ? await conditionValue(param.value, this.conditionContext(env)) : param.value;
      if (/^\d+$/.test(param.name)) positional.push(value);
      else this.setVar(env, param.name, value);
    }
    this.positional = positional;
    this.setAll(env, this.options.env ?? {});
    this.setAll(env, secrets);
    this.baseEnv = env;
  }

  /** A host that did not resolve params through resolveStartParams (CLI, tests) gets the same rule. */
  private refuseReservedParams(): void {
    const declared = new Set(this.dag.params.defs.map((d) => d.name));
    const reserved = this.options.params.filter((p) => !declared.has(p.name) && isReservedParamName(p.name)).map((p) => p.name);
    if (reserved.length > 0) throw new Error(`param ${reserved.join(', ')}: reserved variable name; only a param the DAG declares may set it`);
  }

  private setVar(env: Record<string, string>, key: string, value: string): void {
    env[key] = value;
    this.vars.set(key, value);
  }

  private setAll(env: Record<string, string>, values: Record<string, string>): void {
    for (const [k, v] of Object.entries(values)) this.setVar(env, k, v);
  }

  private expand(text: string): string {
    return expandReferences(text, (head, path) => this.resolveRef(head, path));
  }

  /**
   * Text a shell parses: each resolved reference becomes a variable of `bound` the shell expands
   * as data, so a value is never run as code.
   */
  private expandShellText(text: string, bound: Record<string, string>): string {
    return expandForShell(text, (head, path) => this.resolveRef(head, path), (value) => {
      const name = `TRELLIS_REF_${Object.keys(bound).length}`;
      bound[name] = value;
      return name;
    });
  }

  private resolveRef(head: string, path: string[]): string | undefined {
    const node = path.length > 0 ? this.byRef.get(head) : undefined;
    if (node !== undefined) {
      const [field, key] = path;
      if (field === 'stdout' && path.length === 1) return node.stdoutPath;
      if (field === 'stderr' && path.length === 1) return node.stderrPath;
      if (field === 'exit_code' && path.length === 1) return node.exitCode !== undefined ? String(node.exitCode) : undefined;
      if (field === 'outputs' && key !== undefined && path.length === 2) return node.childOutputs[key] ?? node.childOutputs[outputKey(key)];
    }
    const value = this.vars.get(head);
    if (value === undefined || path.length === 0) return value;
    return readJsonPath(value, path);
  }

  /** The env a step sees: the run's, then everything later steps produced, then its own. */
  private stepEnv(node: NodeState): Record<string, string> {
    const env: Record<string, string> = { ...this.baseEnv, ...Object.fromEntries(this.vars) };
    for (const entry of node.step.env) env[entry.key] = this.expand(entry.value);
    env.DAG_RUN_STEP_NAME = node.step.name;
    env.DAG_RUN_STEP_STDOUT_FILE = node.stdoutPath;
    env.DAG_RUN_STEP_STDERR_FILE = node.stderrPath;
    return env;
  }

  private conditionContext(env: Record<string, string>): ConditionContext {
    return { env, cwd: this.workDir, expand: (text) => this.expand(text), expandForShell: (text, bound) => this.expandShellText(text, bound) };
  }

  /** A step's working directory; without a step, the run's (the DAG's `working_dir`, or the work directory). */
  private workingDirOf(step: Step | undefined): string {
    const dir = step?.workingDir ?? this.dag.workingDir;
    if (dir === undefined) return this.workDir;
    const expanded = this.expand(dir);
    return isAbsolute(expanded) ? expanded : resolve(this.options.baseDir ?? this.workDir, expanded);
  }

  // ---- logs ------------------------------------------------------------------------------

  private newSink(path: string, stream: string, captureBytes?: number, teePath?: string): LogSink {
    return new LogSink({ path, stream, reporter: this.options.reporter, masker: this.masker, ...(captureBytes !== undefined ? { captureBytes } : {}), ...(teePath !== undefined ? { teePath } : {}) });
  }

  private log(message: string): void {
    this.runLog?.append(`${new Date().toISOString()} ${this.masker.mask(message)}\n`);
  }

  /** Where a mail setting asked for a mail, the log says none went out rather than staying silent. */
  private logUnsentMail(occasion: string, setting: string): void {
    this.log(`no mail was sent for ${occasion} (${setting}): ${MAIL_UNAVAILABLE}`);
  }

  private logUnsentStepMail(node: NodeState): void {
    if (node.step.mailOnError && node.status === NodeStatus.Failed) this.logUnsentMail(`the failure of step "${node.step.name}"`, `mail_on_error of step "${node.step.name}"`);
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
      if (this.dag.mailOn.wait) this.logUnsentMail('the wait for approval', 'mail_on.wait');
      this.emit();
      this.waitHandler ??= this.runHandler('wait');
    }
  }

  // ---- one node -----------------------------------------------------------------------------

  private async executeNode(node: NodeState): Promise<void> {
    const env = this.stepEnv(node);
    this.log(`step "${node.step.name}" started`);
    try {
      const pre = await evaluateAll(node.step.preconditions, this.conditionContext(env));
      if (!pre.met) {
        node.finish(NodeStatus.Skipped, pre.reason);
        this.log(`step "${node.step.name}" skipped: ${pre.reason}`);
      } else if (node.step.type === 'router') this.route(node);
      else if (node.step.type === 'dag' || node.step.parallel !== undefined) await this.runSubDags(node);
      else await this.runWithPolicies(node, env);
    } catch (error) {
      node.finish(NodeStatus.Failed, toError(error).message);
    }
    if (!node.waiting) this.log(`step "${node.step.name}" finished: ${node.snapshot().statusLabel}${node.error !== '' ? ` (${node.error})` : ''}`);
    this.logUnsentStepMail(node);
    this.emit();
  }

  private route(node: NodeState): void {
    const router = node.step.router;
    if (router === undefined) return node.finish(NodeStatus.Failed, 'router step has no routes');
    const value = this.expand(router.value);
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

  private async runWithPolicies(node: NodeState, env: Record<string, string>): Promise<void> {
    const repeat = node.step.repeatPolicy;
    let outcome: ExecutionOutcome;
    for (;;) {
      outcome = await this.runWithRetries(node, env);
      node.doneCount += 1;
      if (repeat === undefined || outcome.stopped === true || outcome.timedOut || repeatLimitReached(repeat, node.doneCount)) break;
      if (!(await this.shouldRepeat(node, outcome.exitCode, env))) break;
      this.emit();
      await sleep(backoffDelayMs(repeat, node.doneCount - 1), this.handlerPhase ? new AbortController().signal : this.stopController.signal);
      if (this.stopReason !== undefined && !this.handlerPhase) break;
    }
    this.settle(node, outcome);
    if (node.step.approval !== undefined && node.status === NodeStatus.Success) {
      node.status = NodeStatus.Running;
      node.finishedAt = '';
      node.waiting = true;
      this.log(`step "${node.step.name}" waits for approval${node.step.approval.prompt !== undefined ? `: ${node.step.approval.prompt}` : ''}`);
    }
  }

  private async shouldRepeat(node: NodeState, exitCode: number, env: Record<string, string>): Promise<boolean> {
    const policy = node.step.repeatPolicy;
    if (policy === undefined) return false;
    let holds: boolean;
    if (policy.condition !== undefined) {
      const ctx = this.conditionContext(env);
      holds = policy.expected !== undefined ? matchesExpected(await conditionValue(policy.condition, ctx), this.expand(policy.expected)) : await conditionSucceeds(policy.condition, ctx);
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
      this.log(`step "${node.step.name}" failed (exit ${outcome.exitCode}); retry ${node.retryCount}/${node.step.retryPolicy.limit} in ${delay} ms`);
      this.emit();
      await sleep(delay, this.handlerPhase ? new AbortController().signal : this.stopController.signal);
      if (this.stopReason !== undefined && !this.handlerPhase) return { ...outcome, stopped: true };
    }
  }

  /** Turns the last execution into the node's status, continue_on and output variable. */
  private settle(node: NodeState, outcome: ExecutionOutcome): void {
    node.exitCode = outcome.exitCode;
    const output = node.step.output;
    if (output !== undefined) this.vars.set(output.name, node.output);
    if (outcome.stopped === true && !outcome.timedOut) return node.finish(NodeStatus.Cancelled, this.stopReason === 'dag-timeout' ? 'run timed out' : 'stopped');
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
    const { step, bound } = this.expandStep(node.step);
    const env = { ...stepEnv, ...bound };
    const direct = this.directFiles(step);
    if (direct !== undefined) return this.executeDirect(node, step, env, direct);
    const merged = (step.logOutput ?? this.dag.logOutput) === 'merged';
    const capture = this.dag.maxOutputSize;
    const stdout = this.newSink(node.stdoutPath, `${step.name}/stdout`, capture, step.stdout !== undefined ? this.resolvePath(step.stdout) : undefined);
    const stderr = merged ? stdout : this.newSink(node.stderrPath, `${step.name}/stderr`, undefined, step.stderr !== undefined ? this.resolvePath(step.stderr) : undefined);
    const teeError = stdout.teeError ?? stderr.teeError;
    const outcome = teeError !== undefined ? { exitCode: 1, error: teeError, timedOut: false } : await this.invoke(node, step, env, { stdout, stderr });
    await Promise.all([endSink(stdout), merged ? Promise.resolve() : endSink(stderr)]);
    node.output = stdout.capturedText().trim();
    if (stdout.truncated) this.log(`output of step "${step.name}" truncated at ${capture} bytes (max_output_size)`);
    return outcome;
  }

  /** One call of the step's executor, under the run's stop signal and the step's timeout. */
  private async invoke(node: NodeState, step: Step, env: Record<string, string>, io: Pick<StepExecutionContext, 'stdout' | 'stderr' | 'files'>): Promise<ExecutionOutcome> {
    const controller = new AbortController();
    this.stepControllers.add(controller);
    if (this.stopReason !== undefined && !this.handlerPhase) controller.abort({ kind: this.stopReason } satisfies StopRequest);
    const timer = step.timeoutSec > 0 ? setTimeout(() => controller.abort({ kind: 'step-timeout' } satisfies StopRequest), step.timeoutSec * 1000) : undefined;
    let result: StepExecutionResult;
    try {
      result = await executorFor(step.type).run({
        step,
        env,
        workingDir: this.workingDirOf(node.step),
        shell: step.shell ?? this.dag.shell ?? ['sh'],
        ...io,
        ...(this.options.launcher !== undefined ? { launch: this.options.launcher } : {}),
        signal: controller.signal,
        stopSignal: step.signalOnStop as NodeJS.Signals,
        killAfterMs: this.dag.maxCleanUpTimeSec * 1000,
        positionalParams: this.positional,
      });
    } catch (error) {
      result = { exitCode: 1, error: toError(error).message };
    } finally {
      clearTimeout(timer);
      this.stepControllers.delete(controller);
    }
    const reason = (controller.signal.reason as StopRequest | undefined)?.kind;
    return { ...result, stopped: result.stopped === true || controller.signal.aborted, timedOut: reason === 'step-timeout' };
  }

  /**
   * Shell steps whose output nobody needs to see in Node (no capture, no masking, no copy to a
   * user file) write straight to their log files; a streaming host gets their bytes by reading.
   */
  private directFiles(step: Step): { merged: boolean } | undefined {
    if (this.masker.active || step.type !== 'shell') return undefined;
    if (step.output !== undefined || step.continueOn.output.length > 0 || step.stdout !== undefined || step.stderr !== undefined) return undefined;
    return { merged: (step.logOutput ?? this.dag.logOutput) === 'merged' };
  }

  private async executeDirect(node: NodeState, step: Step, env: Record<string, string>, direct: { merged: boolean }): Promise<ExecutionOutcome> {
    // Synchronous for the same reason as the work directory: two creates per step execution.
    const out = openSync(node.stdoutPath, 'a');
    const err = direct.merged ? out : openSync(node.stderrPath, 'a');
    const files = { stdoutPath: node.stdoutPath, stderrPath: direct.merged ? node.stdoutPath : node.stderrPath, stdoutFd: out, stderrFd: err };
    const follower = this.options.streamLogs !== false ? this.followerOf(node, step, direct) : undefined;
    try {
      return await this.invoke(node, step, env, { stdout: discard, stderr: discard, files });
    } finally {
      closeSync(out);
      if (err !== out) closeSync(err);
      follower?.finish();
    }
  }

  /** A host that streams logs hears of what the process wrote by the files being read. */
  private followerOf(node: NodeState, step: Step, direct: { merged: boolean }): FileFollower {
    const targets = [{ path: node.stdoutPath, stream: `${step.name}/stdout` }];
    if (!direct.merged) targets.push({ path: node.stderrPath, stream: `${step.name}/stderr` });
    return new FileFollower(this.options.reporter, targets);
  }

  private resolvePath(path: string): string {
    return isAbsolute(path) ? path : join(this.workDir, path);
  }

  /**
   * The step with `${...}` references in its fields expanded against what the run knows now; in
   * text a shell parses, references become the `bound` variables (see expandShellText).
   */
  private expandStep(step: Step): { step: Step; bound: Record<string, string> } {
    const bound: Record<string, string> = {};
    const parsed = step.type === 'shell' ? shellParsedTexts(step, step.shell ?? this.dag.shell ?? ['sh']) : { commands: false, script: false };
    const expandText = (text: string, shellParsed: boolean): string => (shellParsed ? this.expandShellText(text, bound) : this.expand(text));
    const out: Step = {
      ...step,
      commands: step.commands.map((c) => expandText(c, parsed.commands)),
      env: step.env.map((e) => ({ key: e.key, value: this.expand(e.value) })),
      config: this.expandDeep(step.config) as Record<string, unknown>,
    };
    if (step.script !== undefined) out.script = expandText(step.script, parsed.script);
    return { step: out, bound };
  }

  private expandDeep(value: unknown): unknown {
    return this.expandDeepWith(value, (text) => this.expand(text));
  }

  private expandDeepWith(value: unknown, expand: (text: string) => string): unknown {
    if (typeof value === 'string') return expand(value);
    if (Array.isArray(value)) return value.map((v) => this.expandDeepWith(v, expand));
    if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.expandDeepWith(v, expand)]));
    return value;
  }

  // ---- sub-DAGs ---------------------------------------------------------------------------

  private parallelItems(node: NodeState): unknown[] | undefined {
    const parallel = node.step.parallel;
    if (parallel === undefined) return undefined;
    if (Array.isArray(parallel.items)) return parallel.items;
    const text = this.expand(parallel.items).trim();
    try {
      const parsed: unknown = JSON.parse(text);
      if (Array.isArray(parsed)) return parsed as unknown[];
    } catch {
      // not JSON: a whitespace-separated list
    }
    return text === '' ? [] : text.split(/\s+/);
  }

  private childRunId(node: NodeState, index: number): string {
    const id = this.options.identity;
    return createHash('sha256').update(`${id.dagRunId}/${id.attemptId}/${node.step.name}/${index}`).digest('hex').slice(0, 32);
  }

  private async runSubDags(node: NodeState): Promise<void> {
    const launch = this.options.launchSubRun;
    const dagName = node.step.call;
    if (launch === undefined || dagName === undefined) return node.finish(NodeStatus.Failed, 'sub-DAG runs are not available in this host');
    const items = this.parallelItems(node);
    const list = items ?? [undefined];
    const localDag = this.options.localDags?.find((d) => d.name === dagName);
    const results: Array<{ status: RunStatus; outputs: Record<string, string>; error?: string }> = [];
    const started = new Set<SubRunHandle>();
    let failure: string | undefined;
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < list.length && this.stopReason === undefined && failure === undefined) {
        const index = next++;
        const item = list[index];
        const itemText = item === undefined ? undefined : typeof item === 'string' ? item : JSON.stringify(item);
        let params: string;
        try {
          params = this.subRunParams(node.step, itemText);
        } catch (error) {
          // One item's params cannot be built: launch no more and stop this step's children, so none outlives the failed node.
          failure = `sub-run ${index}: ${toError(error).message}`;
          for (const child of started) child.stop();
          return;
        }
        const dagRunId = this.childRunId(node, index);
        const ref = { dagRunId, name: dagName, params: this.masker.mask(params), status: RunStatus.Running as RunStatus, statusLabel: runStatusLabel(RunStatus.Running) };
        node.subRuns.push(ref);
        this.emit();
        const handle = launch({
          dagName,
          ...(localDag !== undefined ? { localDag } : {}),
          dagRunId,
          params,
          parent: this.options.identity,
          ...(node.step.workerSelector !== undefined ? { workerSelector: node.step.workerSelector } : {}),
          env: itemText !== undefined ? { ITEM: itemText } : {},
          maskValues: this.masker.valuesIn(params, ...(itemText !== undefined ? [itemText] : [])),
        });
        this.children.add(handle);
        started.add(handle);
        const result = await handle.done.catch((error: unknown) => ({ status: RunStatus.Failed as RunStatus, outputs: {}, error: toError(error).message }));
        this.children.delete(handle);
        started.delete(handle);
        ref.status = result.status;
        ref.statusLabel = runStatusLabel(result.status);
        results[index] = result;
        this.emit();
      }
    };
    const concurrency = items !== undefined ? Math.max(1, node.step.parallel?.maxConcurrent ?? 1) : 1;
    await Promise.all(Array.from({ length: Math.min(concurrency, list.length) }, () => worker()));
    if (failure !== undefined) return node.finish(NodeStatus.Failed, failure);
    this.settleSubDags(node, results, items !== undefined);
  }

  /** A child's params with `${ITEM}` (and `${ITEM.path}`) expanded for its item: what the child gets is what is recorded. */
  private subRunParams(step: Step, item: string | undefined): string {
    const expand = (text: string): string =>
      expandReferences(text, (head, path) => {
        if (head !== 'ITEM' || item === undefined) return this.resolveRef(head, path);
        return path.length === 0 ? item : readJsonPath(item, path);
      });
    if (typeof step.params === 'string') return expand(step.params);
    return step.params !== undefined ? JSON.stringify(this.expandDeepWith(step.params, expand)) : '';
  }

  private settleSubDags(node: NodeState, results: Array<{ status: RunStatus; outputs: Record<string, string>; error?: string }>, parallel: boolean): void {
    const [first] = results;
    if (!parallel && first !== undefined) node.childOutputs = first.outputs;
    const outputValue = parallel ? JSON.stringify(results.map((r) => r.outputs)) : JSON.stringify(first?.outputs ?? {});
    node.output = outputValue;
    if (node.step.output !== undefined) this.vars.set(node.step.output.name, outputValue);
    if (this.stopReason !== undefined) return node.finish(NodeStatus.Cancelled, 'stopped');
    const failed = results.filter((r) => r.status !== RunStatus.Success && r.status !== RunStatus.PartialSuccess);
    if (failed.length === 0) return node.finish(NodeStatus.Success);
    const error = `${failed.length} of ${results.length} sub-run(s) did not succeed${failed[0]?.error !== undefined ? `: ${failed[0].error}` : ''}`;
    if (continueCovers(node.step.continueOn, 1, '')) {
      if (node.step.continueOn.markSuccess) return node.finish(NodeStatus.Success);
      node.coveredFailure = true;
    }
    node.finish(NodeStatus.Failed, error);
  }

  // ---- handlers and outputs ---------------------------------------------------------------

  /** Runs a lifecycle handler if the DAG has one; false when it failed. */
  private async runHandler(kind: HandlerKind): Promise<boolean> {
    const step = this.dag.handlerOn[kind];
    if (step === undefined || this.runLog === undefined) return true;
    const node = this.newNode(step);
    if (this.masker.active) node.maskPayload((text) => this.masker.mask(text));
    this.handlerNodes.set(kind, node);
    node.start();
    this.emit();
    this.log(`handler ${kind} started`);
    try {
      await this.runWithPolicies(node, this.stepEnv(node));
    } catch (error) {
      // A handler that ran ends in the record, whatever went wrong in it.
      node.finish(NodeStatus.Failed, toError(error).message);
    }
    this.log(`handler ${kind} finished: ${node.snapshot().statusLabel}`);
    this.logUnsentStepMail(node);
    this.emit();
    return node.status === NodeStatus.Success;
  }

  private collectOutputs(): RunOutputs {
    const outputs: Record<string, string> = {};
    for (const node of this.nodes) {
      const output = node.step.output;
      if (output === undefined || output.omit || node.status === NodeStatus.NotStarted) continue;
      outputs[output.key ?? outputKey(output.name)] = this.masker.mask(node.output);
    }
    const id = this.options.identity;
    return {
      metadata: {
        dagName: id.dagName,
        dagRunId: id.dagRunId,
        attemptId: id.attemptId,
        status: outputsStatusWord(this.status),
        completedAt: this.finishedAt,
        params: JSON.stringify(this.options.params.map(({ name, value }) => ({ name, value: this.masker.mask(value) }))),
      },
      outputs,
    };
  }
}

async function endSink(sink: LogSink): Promise<void> {
  sink.end();
  await finished(sink).catch(() => undefined);
}

/** Starts one attempt of one DAG run; the handle stops, approves, rejects and awaits it. */
export function runDag(options: RunOptions): RunHandle {
  return new DagRunner(options);
}
