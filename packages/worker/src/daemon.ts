import { hostname } from 'node:os';
import { runLineage, type RunCommandMessage, type Task, type TaskRef } from '@trellis/core/protocol';
import { toError } from '@trellis/core/protocol';
import type { WorkerConfig } from './config.js';
import { CoordinatorClient, GrpcStatus, grpcCode, isCoordinatorAway, type PendingCall } from './grpc/client.js';
import type { Logger } from './logging.js';
import { Backoff, sleep } from './reporting/backoff.js';
import type { EngineHost } from './tasks/engine-host.js';
import type { RunningAttempt } from './tasks/task-runner.js';
import { AttemptFolders } from './tasks/attempt-dir.js';

export const WORKER_VERSION = '0.1.0';
const POLL_WAIT_MS = 20_000;
/**
 * With several coordinators, how long the current one may stay unreachable before the worker
 * moves to the next: longer than a dropped connection takes to come back, far shorter than
 * the heartbeat timeout after which a coordinator fails the worker's runs as lost.
 */
const FAILOVER_AFTER_MS = 3000;

/** The coordinator refused this worker's credentials: retrying cannot help. */
export class WorkerRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WorkerRefusedError';
  }
}

/** The extra poller a lent slot runs, until the loan ends. */
interface LentPoller {
  over: boolean;
  poll?: PendingCall<unknown>;
}

export interface WorkerDaemonOptions {
  /**
   * Called before each attempt to load the engine (the first task's, and again after a failed
   * load): what the process needs only once it runs steps can be switched on here.
   */
  onEngineLoad?: () => void;
}

const sameAttempt = (a: TaskRef, b: TaskRef): boolean => a.dagName === b.dagName && a.dagRunId === b.dagRunId && a.attemptId === b.attemptId;

/**
 * The worker daemon: registers, runs one poller per slot, heartbeats every second, and keeps
 * its runs going (buffering their reports) while the coordinator is away.
 */
export class WorkerDaemon {
  private readonly client: CoordinatorClient;
  private readonly running = new Map<string, RunningAttempt>();
  /** Tasks being acknowledged: held (the coordinator must not count them lost) but not running yet. */
  private readonly claiming = new Map<string, TaskRef>();
  private readonly polls = new Set<PendingCall<unknown>>();
  private readonly folders: AttemptFolders;
  /** Loaded with the first task (see EngineHost); undefined until then. */
  private host: Promise<EngineHost> | undefined;
  private stopping = false;
  private busy = 0;
  private lent = 0;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private heartbeatMs = 1000;
  /** Since when heartbeats fail (0 while they succeed): contact is lost once, and regained once, in the log. */
  private unreachableSince = 0;
  private pollers: Promise<void>[] = [];
  private registering: Promise<void> | undefined;
  private fatal: (error: Error) => void = () => undefined;
  private resolveFinished: () => void = () => undefined;
  /** Resolves after a shutdown; rejects with WorkerRefusedError when the coordinator refuses us. */
  readonly finished: Promise<void>;

  constructor(
    private readonly config: WorkerConfig,
    private readonly logger: Logger,
    private readonly options: WorkerDaemonOptions = {},
  ) {
    this.client = new CoordinatorClient(config);
    // Finished attempts wait for their reports before their folder frees: room for a second round.
    this.folders = new AttemptFolders(config.workDir, config.pollers * 2);
    this.finished = new Promise((resolve, reject) => {
      this.fatal = reject;
      this.resolveFinished = resolve;
    });
    // Callers may await only start(); a refusal must not also surface as an unhandled rejection.
    this.finished.catch(() => undefined);
  }

  /** Registers (waiting for the coordinator if it is not up yet), then starts polling and heartbeats. */
  async start(): Promise<void> {
    await this.folders.clearLeftovers();
    await this.register();
    this.scheduleHeartbeat();
    this.pollers = Array.from({ length: this.config.pollers }, (_, i) => this.pollLoop(i));
    this.logger.info('worker started', { coordinator: this.client.address, labels: this.config.labels, pollers: this.config.pollers });
  }

  /** Stops polling; running tasks get the grace period, then are stopped; reports are flushed. */
  async shutdown(): Promise<void> {
    if (this.stopping) return this.finished;
    this.stopping = true;
    for (const call of this.polls) call.cancel();
    this.logger.info('worker stopping: no new tasks; waiting for running ones', { running: this.running.size, graceSec: this.config.shutdownGraceSec });
    const all = () => Promise.all([...this.running.values()].map((a) => a.done));
    // Without a host nothing has run, so nothing is running (nor with one that failed to load).
    const host = await this.host?.catch(() => undefined);
    if (host !== undefined && !(await host.settlesWithin(all(), this.config.shutdownGraceSec * 1000))) {
      this.logger.warn('grace period over: stopping running tasks', { running: this.running.size });
      for (const attempt of this.running.values()) attempt.stop();
      await host.settlesWithin(all(), 30_000);
    }
    await Promise.all(this.pollers);
    clearTimeout(this.heartbeatTimer);
    await host?.close();
    this.client.close();
    this.logger.info('worker stopped');
    this.resolveFinished();
    return this.finished;
  }

  private async register(): Promise<void> {
    this.registering ??= this.registerNow().finally(() => {
      this.registering = undefined;
    });
    return this.registering;
  }

  private async registerNow(): Promise<void> {
    const backoff = new Backoff(500, 5000);
    for (;;) {
      try {
        const answer = await this.client.request('Register', {
          workerId: this.config.id,
          labels: this.config.labels,
          pollers: this.config.pollers,
          hostname: hostname(),
          version: WORKER_VERSION,
          // What this process holds: the coordinator ends whatever else it recorded on this id.
          held: [...[...this.running.values()].map((a) => a.task.ref), ...this.claiming.values()],
          listsHeld: true,
        });
        this.heartbeatMs = answer.heartbeatIntervalMs > 0 ? answer.heartbeatIntervalMs : 1000;
        this.logger.info('registered with the coordinator', { coordinator: this.client.address, resumed: answer.assigned.length });
        return;
      } catch (error) {
        this.refuseIfUnauthenticated(error);
        if (this.stopping) return;
        const wait = backoff.next();
        this.logger.warn('coordinator unreachable; retrying registration', { coordinator: this.client.address, waitMs: Math.round(wait), error: toError(error).message });
        // Each retry tries the next coordinator, if there is one: one that is down is not waited for.
        if (this.client.canFailOver && isCoordinatorAway(error)) this.failOver();
        await sleep(wait);
      }
    }
  }

  private refuseIfUnauthenticated(error: unknown): void {
    const code = grpcCode(error);
    if (code !== GrpcStatus.UNAUTHENTICATED && code !== GrpcStatus.PERMISSION_DENIED) return;
    const refused = new WorkerRefusedError(`the coordinator refused this worker: ${toError(error).message.replace(/^\d+ [A-Z_]+: /, '')}`);
    this.logger.error(refused.message);
    this.stopping = true;
    for (const call of this.polls) call.cancel();
    clearTimeout(this.heartbeatTimer);
    void this.host?.then((host) => host.close()).catch(() => undefined);
    this.fatal(refused);
    throw refused;
  }

  private async pollLoop(index: number, loan?: LentPoller): Promise<void> {
    const backoff = new Backoff(200, 5000);
    const loanOver = (): boolean => loan?.over === true;
    while (!this.stopping && !loanOver()) {
      const call = this.client.call('Poll', { workerId: this.config.id, pollerIndex: index, waitMs: POLL_WAIT_MS }, POLL_WAIT_MS + 10_000);
      this.polls.add(call);
      if (loan !== undefined) loan.poll = call;
      let task: Task | null | undefined;
      try {
        task = (await call.response).task;
        backoff.reset();
      } catch (error) {
        if (this.stopping || loanOver()) break;
        try {
          this.refuseIfUnauthenticated(error);
        } catch {
          break;
        }
        if (grpcCode(error) === GrpcStatus.NOT_FOUND) await this.register();
        else await sleep(backoff.next());
        continue;
      } finally {
        this.polls.delete(call);
      }
      if (task != null) await this.runTask(task);
    }
  }

  /**
   * Lends a slot to an extra poller (tasks/slot-loan.ts decides when); ending the loan lets that
   * poller finish the task it holds, if any, and stop.
   */
  private lendSlot(): () => void {
    if (this.stopping) return () => undefined;
    const loan: LentPoller = { over: false };
    this.lent += 1;
    // Each loan adds a poll loop; it leaves the list when it ends, so loans do not pile up.
    const loop = this.pollLoop(this.config.pollers + this.lent - 1, loan);
    this.pollers.push(loop);
    void loop
      .finally(() => {
        this.pollers = this.pollers.filter((p) => p !== loop);
      })
      .catch(() => undefined);
    return () => {
      if (loan.over) return;
      loan.over = true;
      this.lent -= 1;
      loan.poll?.cancel();
    };
  }

  /** Loads the engine, confirms the claim (retrying while the coordinator is away), then runs it to the end. */
  private async runTask(task: Task): Promise<void> {
    const key = `${task.ref.dagName}/${task.ref.dagRunId}/${task.ref.attemptId}`;
    this.claiming.set(key, task.ref);
    try {
      const host = await this.loadEngine(task);
      if (host !== undefined && (await this.acknowledge(task))) await this.runAcknowledged(key, task, host);
    } finally {
      this.claiming.delete(key);
    }
  }

  /**
   * The engine, or undefined when it could not be loaded. Loaded before the claim is confirmed:
   * a task this worker cannot run is never acknowledged, so it goes back to the queue (for this
   * worker's next try or another worker) instead of being lost, and the poller goes on.
   */
  private async loadEngine(task: Task): Promise<EngineHost | undefined> {
    try {
      return await this.engineHost();
    } catch (error) {
      this.logger.error('could not load the engine; the task goes back to the queue', { dagRunId: task.ref.dagRunId, error: toError(error).message });
      return undefined;
    }
  }

  /** Confirms the claim, retrying while the coordinator is away; false when it was taken back. */
  private async acknowledge(task: Task): Promise<boolean> {
    const backoff = new Backoff(200, 3000);
    let accepted = false;
    for (;;) {
      try {
        const answer = await this.client.request('AckTask', { workerId: this.config.id, ref: task.ref });
        accepted = answer.accepted;
        if (!accepted) this.logger.warn('task taken back before it started; skipping it', { dagRunId: task.ref.dagRunId, reason: answer.reason });
        break;
      } catch (error) {
        if (!isCoordinatorAway(error)) {
          this.logger.error('could not acknowledge a task; skipping it', { dagRunId: task.ref.dagRunId, error: toError(error).message });
          break;
        }
        await sleep(backoff.next());
      }
    }
    return accepted;
  }

  /** Runs an acknowledged task to the end; it is listed as running from before it stops being claimed. */
  private async runAcknowledged(key: string, task: Task, host: EngineHost): Promise<void> {
    const attempt = host.start({ client: this.client, workerId: this.config.id, folders: this.folders, logger: this.logger, lendSlot: () => this.lendSlot() }, task, () => this.stopping);
    this.running.set(key, attempt);
    this.claiming.delete(key);
    this.busy += 1;
    // The slot frees when the engine ends; the attempt stays listed until its reports are delivered.
    void attempt.done.finally(() => this.running.delete(key));
    try {
      await attempt.ended;
    } finally {
      this.busy -= 1;
    }
  }

  private engineHost(): Promise<EngineHost> {
    if (this.host !== undefined) return this.host;
    this.options.onEngineLoad?.();
    // A failed load is not kept: the next task tries again instead of every task failing for good.
    this.host = import('./tasks/engine-host.js')
      .then(({ EngineHost }) => new EngineHost((message) => this.logger.error(message)))
      .catch((error: unknown) => {
        this.host = undefined;
        throw error;
      });
    return this.host;
  }

  /** An approval decision from the coordinator for a step waiting in one of our runs. */
  private decide(command: RunCommandMessage): void {
    const attempt = [...this.running.values()].find((a) => sameAttempt(a.task.ref, command.ref));
    const log = { dagRunId: command.ref.dagRunId, step: command.stepName, decision: command.kind };
    if (attempt?.handle === undefined) return void this.logger.warn('decision for a run not running here', log);
    try {
      if (command.kind === 'approve') attempt.handle.approve(command.stepName, command.inputs);
      else attempt.handle.reject(command.stepName, command.reason);
      this.logger.info('step decision applied', log);
    } catch (error) {
      this.logger.warn('step decision refused', { ...log, error: toError(error).message });
    }
  }

  private scheduleHeartbeat(): void {
    if (this.stopping && this.running.size === 0) return;
    this.heartbeatTimer = setTimeout(() => {
      void this.heartbeat().finally(() => this.scheduleHeartbeat());
    }, this.heartbeatMs);
  }

  private async heartbeat(): Promise<void> {
    const running = [...this.running.values()].map((a) => ({
      ref: a.task.ref,
      startedAt: a.startedAt,
      ...runLineage(a.task),
    }));
    try {
      const answer = await this.client.request('Heartbeat', { workerId: this.config.id, running, pollersTotal: this.config.pollers + this.lent, pollersBusy: this.busy, claiming: [...this.claiming.values()] }, 5000);
      this.contactRegained();
      for (const ref of answer.cancel) {
        const attempt = [...this.running.values()].find((a) => sameAttempt(a.task.ref, ref));
        if (attempt === undefined) continue;
        this.logger.info('coordinator cancelled a run; stopping it', { dagName: ref.dagName, dagRunId: ref.dagRunId, attemptId: ref.attemptId });
        attempt.stop();
      }
      for (const command of answer.commands) this.decide(command);
      if (answer.reregister) await this.register();
    } catch (error) {
      try {
        this.refuseIfUnauthenticated(error);
      } catch {
        return;
      }
      this.contactLost(toError(error));
      if (this.client.canFailOver && isCoordinatorAway(error) && Date.now() - this.unreachableSince >= FAILOVER_AFTER_MS) {
        this.failOver();
        // The next coordinator knows nothing of this worker yet: it learns what runs here, and the reports held are resent to it.
        await this.register();
      }
    }
  }

  /** Moves to the next coordinator: calls in flight fail as unreachable and are retried there. */
  private failOver(): void {
    const from = this.client.address;
    const to = this.client.failover();
    this.unreachableSince = Date.now();
    this.logger.warn('moving to the next coordinator', { from, to, running: this.running.size });
  }

  private contactLost(error: Error): void {
    if (this.unreachableSince !== 0) {
      this.logger.debug('heartbeat failed', { error: error.message });
      return;
    }
    this.unreachableSince = Date.now();
    this.logger.warn('lost contact with the coordinator; running tasks go on and their reports are held', { coordinator: this.client.address, running: this.running.size, error: error.message });
  }

  private contactRegained(): void {
    if (this.unreachableSince === 0) return;
    this.logger.info('coordinator reachable again', { coordinator: this.client.address, unreachableMs: Date.now() - this.unreachableSince, running: this.running.size });
    this.unreachableSince = 0;
  }
}
