import { nextRunTimes, previousRunTime, ServiceUnavailableError, type Dag, type ScheduleEntry, toError, AlreadyExistsError } from '@trellis/core';
import {
  abortQueuedScheduledRuns, activeRunsOf, consumeOneOff, consumedOneOffs, countActiveRuns, holdsSchedulerLease, lockSchedulerState,
  setLastTick, succeededSince, suspendedAmong, type Db, type Queryable,
} from '@trellis/store';
import type { Logger } from '../logging/logger.js';
import type { DagIndex, IndexedDag } from '../definitions/dag-index.js';
import type { RunService } from '../runs/run-service.js';
import { auditRun } from '../runs/run-audit.js';
import { SCHEDULER } from '../auth/principal.js';
import { ceilMinute, MINUTE_MS, systemTimeZone, type SchedulerClock } from './clock.js';
import { firesFor, scheduledRunId, type Fire } from './fires.js';
import type { SchedulerLeadership } from './leadership.js';

export interface SchedulerDeps {
  db: Db;
  logger: Logger;
  index: DagIndex;
  runs: RunService;
  clock: SchedulerClock;
  leadership: SchedulerLeadership;
  /** The zone of cron entries that name none (configuration `timezone`); absent: the system's. */
  timezone: string | undefined;
  /** The effective default profile of every DAG (configuration `defaultProfile`): the only profile a schedule entry may name and be active. */
  defaultProfile: string | undefined;
}

/** What one tick did (tests read it; the log says it). */
export interface TickOutcome {
  tick: Date;
  started: string[];
  skipped: string[];
  stopped: string[];
}

/** Another coordinator took the scheduler lease mid-tick: this one stops scheduling, it did nothing wrong. */
class LeaseLostError extends ServiceUnavailableError {}

interface PostCommit {
  stops: Array<{ dag: IndexedDag }>;
  restarts: Array<{ dag: IndexedDag; fire: Fire }>;
}

/**
 * Ticks on minute boundaries while this coordinator holds the scheduler lease. A tick reads
 * the last tick from the database and handles every fire in (lastTick, tick] in one
 * transaction that also records the new last tick and the one-offs it consumed, fenced by the
 * lease token; run ids are deterministic, so a tick repeated by a new leader adds nothing.
 */
export class Scheduler {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private consumed = new Map<string, Set<string>>();
  private suspended = new Set<string>();
  /**
   * The next fire of each cron entry of the DAGs in the index, from the instant it was computed
   * on: it stays the next fire until the clock reaches it. Finding it (croner) was about a tenth
   * of the coordinator's CPU for a page of the DAG list, which shows every DAG's next run.
   */
  private readonly nextFires = new WeakMap<ScheduleEntry, { from: number; at: number; zone: string }>();

  constructor(private readonly deps: SchedulerDeps) {}

  private timezone(): string {
    return this.deps.timezone ?? systemTimeZone();
  }

  async start(): Promise<void> {
    await this.refreshView();
    this.scheduleNext();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** The suspend endpoint changed a DAG: its next run shows (or clears) at once. */
  setSuspended(name: string, suspended: boolean): void {
    if (suspended) this.suspended.add(name);
    else this.suspended.delete(name);
  }

  /** `nextRun` as the scheduler sees it: empty when suspended; pending one-offs until they are consumed; active entries only. */
  nextRun(entry: IndexedDag): string {
    const dag = entry.result.dag;
    // Most DAGs have no schedule: a list of a hundred asks for each.
    if (dag === undefined || dag.schedule.start.length === 0 || this.suspended.has(entry.name)) return '';
    const consumed = this.consumed.get(entry.name);
    const now = this.deps.clock.now();
    let best: number | undefined;
    for (const scheduled of dag.schedule.start.filter((e) => isActive(e, this.deps.defaultProfile))) {
      const at = scheduled.kind === 'at' ? (consumed?.has(scheduled.at) === true ? undefined : new Date(scheduled.at).getTime()) : this.nextFire(scheduled, now);
      if (at !== undefined && (best === undefined || at < best)) best = at;
    }
    return best === undefined ? '' : new Date(best).toISOString();
  }

  /** The first fire of a cron entry strictly after `now`. */
  private nextFire(entry: ScheduleEntry, now: Date): number | undefined {
    const zone = this.timezone();
    const t = now.getTime();
    const known = this.nextFires.get(entry);
    // Valid only for an instant between the one it was computed from and the fire (a clock set back needs a new one).
    if (known !== undefined && known.zone === zone && known.from <= t && t < known.at) return known.at;
    const at = nextRunTimes(entry, now, 1, zone)[0]?.getTime();
    if (at !== undefined) this.nextFires.set(entry, { from: t, at, zone });
    return at;
  }

  /** One tick at `tick` (a minute boundary). Does nothing unless this coordinator leads. */
  async tick(tick: Date): Promise<TickOutcome | undefined> {
    const token = this.deps.leadership.current;
    if (token === undefined) return undefined;
    const outcome: TickOutcome = { tick, started: [], skipped: [], stopped: [] };
    const after: PostCommit = { stops: [], restarts: [] };
    try {
      const ticked = await this.deps.db.transaction(async (tx) => {
        if (!(await holdsSchedulerLease(tx, this.deps.leadership.holder, token))) throw new LeaseLostError('the scheduler lease passed to another coordinator');
        const state = await lockSchedulerState(tx);
        if (state.lastTick !== null && state.lastTick.getTime() >= tick.getTime()) return false;
        // Paused: time moves on and what it passes is discarded, not deferred.
        if (!state.paused) {
          const from = state.lastTick ?? new Date(tick.getTime() - MINUTE_MS);
          await this.fireAll(tx, from, tick, outcome, after);
        }
        await setLastTick(tx, tick);
        return true;
      });
      if (!ticked) return undefined;
    } catch (error) {
      if (error instanceof LeaseLostError) {
        this.deps.leadership.lost();
        return undefined;
      }
      throw error;
    }
    if (outcome.started.length > 0) await this.deps.runs.wakeDispatchers();
    await this.afterCommit(after, outcome);
    await this.refreshView();
    if (outcome.started.length + outcome.stopped.length + outcome.skipped.length > 0) this.deps.logger.info('scheduler tick', { ...outcome, tick: tick.toISOString() });
    return outcome;
  }

  private async fireAll(tx: Queryable, from: Date, tick: Date, outcome: TickOutcome, after: PostCommit): Promise<void> {
    const entries = this.deps.index.all().filter((e) => e.result.dag !== undefined);
    const suspended = await suspendedAmong(tx, entries.map((e) => e.name));
    const consumed = await consumedOneOffs(tx);
    for (const entry of entries) {
      const dag = entry.result.dag;
      if (dag === undefined || suspended.has(entry.name)) continue;
      for (const fire of firesFor(dag, from, tick, () => this.timezone(), consumed.get(entry.name) ?? new Set(), true)) {
        if (!isActive(fire.entry, this.deps.defaultProfile)) continue;
        if (fire.kind === 'stop') after.stops.push({ dag: entry });
        else if (fire.kind === 'restart') after.restarts.push({ dag: entry, fire });
        else await this.startScheduled(tx, entry, dag, fire, outcome);
      }
    }
  }

  /** One start fire, with the DAG's skip_if_successful and overlap_policy, and one-offs waiting while the DAG is busy. */
  private async startScheduled(tx: Queryable, entry: IndexedDag, dag: Dag, fire: Fire, outcome: TickOutcome): Promise<void> {
    const id = scheduledRunId(fire);
    const label = `${entry.name}/${id}`;
    const active = await countActiveRuns(tx, entry.name);
    if (fire.entry.kind === 'at') {
      if (active > 0) return void outcome.skipped.push(`${label} (pending: the DAG is busy)`);
      if (!(await consumeOneOff(tx, entry.name, fire.entry.at, id))) return;
    } else {
      const previous = previousRunTime(fire.entry, fire.at, this.timezone());
      if (dag.skipIfSuccessful && previous !== undefined && (await succeededSince(tx, entry.name, previous))) return void outcome.skipped.push(`${label} (succeeded since ${previous.toISOString()})`);
      if (active > 0 && dag.overlapPolicy === 'skip') return void outcome.skipped.push(`${label} (overlap_policy skip: a run is active)`);
      if (dag.overlapPolicy === 'latest') await abortQueuedScheduledRuns(tx, entry.name, `superseded by ${id} (overlap_policy latest)`);
    }
    try {
      // No caller's right to check: a scheduled run gets the configured default profile, protected
      // or not, by the authority of the configuration that chose it (README, Runtime profiles).
      const run = await this.deps.runs.enqueue(
        { yaml: entry.text, fileName: entry.fileName, dag, dagRunId: id, trigger: 'schedule', actor: SCHEDULER, profileCheckAtStart: true },
        tx,
      );
      await auditRun(tx, SCHEDULER, 'run.started', run, { trigger: run.trigger });
      outcome.started.push(label);
    } catch (error) {
      // The run of this time exists already (a repeated tick, or a previous leader made it).
      if (!(error instanceof AlreadyExistsError)) throw error;
    }
  }

  private async afterCommit(after: PostCommit, outcome: TickOutcome): Promise<void> {
    for (const { dag } of [...after.stops, ...after.restarts]) {
      for (const run of await activeRunsOf(this.deps.db, dag.name)) {
        await this.deps.runs.stop(run).then(
          () => auditRun(this.deps.db, SCHEDULER, 'run.stopped', run, { trigger: 'schedule' }),
          (error: unknown) => this.deps.logger.warn('scheduled stop failed', { dagRunId: run.dagRunId, error: toError(error) }),
        );
        outcome.stopped.push(`${dag.name}/${run.dagRunId}`);
      }
    }
    for (const { dag, fire } of after.restarts) {
      const wait = (dag.result.dag?.restartWaitSec ?? 0) * 1000;
      setTimeout(() => void this.restart(dag, fire), wait).unref();
    }
  }

  private async restart(entry: IndexedDag, fire: Fire): Promise<void> {
    const dag = entry.result.dag;
    if (dag === undefined || this.stopped) return;
    await this.deps.runs
      .enqueue({ yaml: entry.text, fileName: entry.fileName, dag, dagRunId: scheduledRunId(fire), trigger: 'schedule', actor: SCHEDULER })
      .then((run) => auditRun(this.deps.db, SCHEDULER, 'run.started', run, { trigger: run.trigger, restart: true }))
      .catch((error: unknown) => {
        if (!(error instanceof AlreadyExistsError)) this.deps.logger.error('scheduled restart failed', { dagName: entry.name, error: toError(error) });
      });
  }

  private async refreshView(): Promise<void> {
    const names = this.deps.index.all().map((e) => e.name);
    [this.consumed, this.suspended] = await Promise.all([consumedOneOffs(this.deps.db), suspendedAmong(this.deps.db, names)]);
  }

  private scheduleNext(): void {
    if (this.stopped) return;
    const next = ceilMinute(new Date(this.deps.clock.now().getTime() + 1));
    this.timer = setTimeout(() => {
      this.tick(next)
        .catch((error: unknown) => this.deps.logger.error('scheduler tick failed; the next tick covers it', { tick: next.toISOString(), error: toError(error) }))
        .finally(() => this.scheduleNext());
    }, this.deps.clock.msUntil(next));
    this.timer.unref();
  }
}

/**
 * The contract's rule: an entry naming a profile is active only when that is the DAG's
 * effective default profile (the run then uses it); unscoped entries always are.
 */
function isActive(entry: ScheduleEntry, defaultProfile: string | undefined): boolean {
  return entry.profile === undefined || entry.profile === defaultProfile;
}
