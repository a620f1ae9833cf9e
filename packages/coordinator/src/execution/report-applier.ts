import { isTerminalRunStatus, type ReportEvent, type TaskRef } from '@trellis/core';
import type { RunOutputs, RunSnapshot } from '@trellis/engine';
import { advanceReportSeq, appendLogChunks, appendOwnLogChunks, getRun, saveAttemptOutputs, writeSnapshot, type Db, type LogStreamInfo, type NewLogChunk, type OwnLogStreams, type RefusedLogChunk, type RunRecord } from '@trellis/store';
import { snapshotWrite } from './snapshot-write.js';
import { KeyedTurns } from '../concurrency/keyed-turns.js';
import type { RunObserver } from './run-observer.js';
import type { LogFollowers } from '../logs/log-followers.js';
import type { RunEnds } from '../runs/run-ends.js';
import type { Logger } from '../logging/logger.js';
import { attemptLogDir, placeSnapshot, workerStreamName } from '../logs/log-streams.js';

export interface ReportOutcome {
  appliedSeq: number;
  stale: boolean;
  /** The run reached a terminal status with this batch: its queue slot is free. */
  finished: boolean;
}

/** Attempts this coordinator remembers from their acknowledgement; oldest forgotten first. */
const MAX_KNOWN_ATTEMPTS = 10_000;

interface KnownAttempt {
  run: RunRecord;
  workerId: string;
  appliedSeq: number;
  /** Read after the run had ended: only resends of what was applied are answered. */
  ended: boolean;
  /** Where the attempt's log streams end, as far as this coordinator stored them. */
  streams: OwnLogStreams;
}

/** The batch's log chunks, each in its stream's name under the attempt's folder (others are dropped). */
function logChunks(runDir: string, events: ReportEvent[]): NewLogChunk[] {
  return events.flatMap((event): NewLogChunk[] => {
    const stream = event.body === 'log' && event.log != null ? workerStreamName(runDir, event.log.stream) : undefined;
    return stream !== undefined && event.log != null ? [{ stream, offset: Number(event.log.offset), data: event.log.data }] : [];
  });
}

const attemptKey = (ref: TaskRef): string => `${ref.dagName}\u0000${ref.dagRunId}\u0000${ref.attemptId}`;

/**
 * Applies a worker's reports for one attempt, in sequence order, skipping what was already
 * applied. Reports from any attempt but the current one, or from another worker, are stale.
 * Reports of one attempt are applied one batch at a time.
 *
 * An attempt acknowledged here is remembered, so its reports need no read of the run first:
 * every write is fenced in SQL on the attempt id (a taken-back lease gets a new one) and on the
 * report sequence, so a stale attempt or a report another coordinator already applied changes
 * nothing. Attempts acknowledged elsewhere, or forgotten, are read from the database.
 *
 * An attempt's last report ends its run, so new reports for a run that already ended come from
 * an attempt the coordinator ended itself (its worker was lost): they are stale, and none of
 * their log text or outputs is kept. A run fails as lost only after its worker was silent for
 * the whole heartbeat timeout, at whichever coordinator noticed; so the cache is trusted only
 * for a worker whose heartbeat this coordinator answered within half that time, and attempts a
 * heartbeat is told to cancel are forgotten before the worker counts as heard again.
 */
export class ReportApplier {
  private readonly chains = new KeyedTurns();
  private readonly known = new Map<string, KnownAttempt>();
  /** When each worker's last heartbeat here was answered. */
  private readonly heard = new Map<string, number>();

  constructor(
    private readonly db: Db,
    private readonly observer: RunObserver,
    /** How long after its last heartbeat a worker's cached attempts are still trusted. */
    private readonly trustMs: number,
    /** Told when a run's log chunks are stored, so its followers here read them at once. */
    private readonly followers: Pick<LogFollowers, 'appended'>,
    /** Told when a report here ends a run: a wait for it on this coordinator ends at once. */
    private readonly ends: RunEnds,
    private readonly logger: Logger,
  ) {}

  /** A worker acknowledged this attempt here: its reports will most likely come here too. */
  remember(workerId: string, run: RunRecord): void {
    if (this.known.size >= MAX_KNOWN_ATTEMPTS) this.known.delete(this.known.keys().next().value as string);
    this.known.set(attemptKey(run), { run, workerId, appliedSeq: run.reportSeq, ended: false, streams: this.streamsOf(attemptKey(run)) });
  }

  /** A heartbeat of this worker was answered, telling it to cancel `cancelled`: those are stale from now on. */
  heartbeatAnswered(workerId: string, cancelled: TaskRef[]): void {
    for (const ref of cancelled) this.known.delete(attemptKey(ref));
    this.heard.set(workerId, Date.now());
  }

  /** The coordinator ended these attempts of this worker itself: anything it still reports of them is stale. */
  forget(workerId: string, refs: TaskRef[]): void {
    for (const ref of refs) if (this.known.get(attemptKey(ref))?.workerId === workerId) this.known.delete(attemptKey(ref));
  }

  apply(workerId: string, ref: TaskRef, events: ReportEvent[]): Promise<ReportOutcome> {
    return this.chains.run(`${ref.dagName}\u0000${ref.dagRunId}`, () => this.applyNow(workerId, ref, events));
  }

  /**
   * Log chunks and outputs first, so a client that sees the run end finds them; then only the
   * newest status snapshot of the batch, since each snapshot is complete and supersedes the
   * older ones, with the sequence advanced in the same statement. Usually (no outputs, and the
   * streams end where this coordinator stored them) chunks and snapshot go in one statement that
   * writes the snapshot only once the chunks are stored: one round trip instead of six for a
   * batch with a status (a 1-step run sends two); a batch without one advances the sequence in a
   * second.
   */
  private async applyNow(workerId: string, ref: TaskRef, events: ReportEvent[]): Promise<ReportOutcome> {
    const key = attemptKey(ref);
    const attempt = this.known.get(key);
    const trusted = attempt?.workerId === workerId && Date.now() - (this.heard.get(workerId) ?? 0) < this.trustMs;
    const known = trusted ? attempt : await this.readAttempt(workerId, ref);
    if (known === undefined) return this.refuse(key);
    const { run } = known;
    const fresh = events.filter((e) => e.seq > known.appliedSeq).sort((a, b) => a.seq - b.seq);
    const last = fresh.at(-1);
    if (last === undefined) return { appliedSeq: known.appliedSeq, stale: false, finished: false };
    if (known.ended) return this.refuse(key);
    const runDir = attemptLogDir(run);
    const chunks = logChunks(runDir, fresh);
    const status = fresh.findLast((e) => e.body === 'statusJson' && e.statusJson !== undefined)?.statusJson;
    const snapshot = status !== undefined ? (JSON.parse(status) as RunSnapshot) : undefined;
    // The fence is the attempt the report was sent for, whatever the body claims.
    const write = snapshot !== undefined ? snapshotWrite(run.id, { ...placeSnapshot(runDir, snapshot), attemptId: run.attemptId }, last.seq) : undefined;
    const hasOutputs = fresh.some((e) => e.body === 'outputsJson' && e.outputsJson !== undefined);
    let moved: boolean;
    const own = hasOutputs ? undefined : await appendOwnLogChunks(this.db, run.id, run.attemptId, chunks, known.streams, write);
    if (own?.logsStored === true) {
      if (chunks.length > 0) this.followers.appended(run.id);
      moved = own.moved;
    } else {
      await this.storeLogs(run, chunks, known.streams);
      if (!(await this.saveOutputs(run, fresh))) return this.refuse(key);
      moved = write !== undefined && (await writeSnapshot(this.db, write));
    }
    if (!moved && !(await advanceReportSeq(this.db, run.id, run.attemptId, last.seq))) return this.refuse(key);
    known.appliedSeq = Math.max(known.appliedSeq, last.seq);
    const terminal = moved && snapshot !== undefined && isTerminalRunStatus(snapshot.status) ? snapshot.status : undefined;
    if (terminal !== undefined) {
      this.known.delete(key);
      this.observer.finished(run.dagName, terminal, run.startedAt);
      this.ends.ended(run.dagName, run.dagRunId);
    }
    return { appliedSeq: last.seq, stale: false, finished: terminal !== undefined };
  }

  /**
   * Stores the batch's log chunks before the sequence moves, by the locking path: the batch
   * carries outputs, or appendOwnLogChunks stored nothing (a stream did not end where this
   * coordinator thought: a resend, reports another coordinator stored, chunks that do not follow
   * on; or another coordinator stored the same offsets first). A coordinator
   * that dies after this but before its answer leaves the worker to resend them, to whichever
   * coordinator it reaches next, which keeps the bytes already stored once (chunks are keyed by
   * byte offset).
   */
  private async storeLogs(run: RunRecord, chunks: NewLogChunk[], streams: OwnLogStreams): Promise<void> {
    const { stored, refused, ends } = await appendLogChunks(this.db, run.id, run.attemptId, chunks);
    for (const [stream, end] of ends) streams.set(stream, end);
    if (stored > 0) this.followers.appended(run.id);
    if (refused.length > 0) this.lost(run, chunks, refused);
  }

  /** The batch's outputs, in order; false when the attempt is no longer the run's current one. */
  private async saveOutputs(run: RunRecord, events: ReportEvent[]): Promise<boolean> {
    for (const event of events) {
      if (event.body !== 'outputsJson' || event.outputsJson === undefined) continue;
      const outputs = JSON.parse(event.outputsJson) as RunOutputs;
      if (!(await saveAttemptOutputs(this.db, run.id, run.attemptId, outputs.metadata, outputs.outputs))) return false;
    }
    return true;
  }

  /**
   * Chunks refused as starting past their stream's end are lost, and the sequence still moves
   * past them. Holding it back would make the worker resend the same events, but a resend carries
   * the same chunks at the same offsets: the missing bytes are in events the worker no longer
   * holds (acknowledged, or dropped as malformed), and it does not read its log files again. The
   * same chunks would be refused forever and every later report, the run's end included, would
   * wait behind them. So the loss is logged as an error and counted (svc_log_bytes_refused_total).
   */
  private lost(run: RunRecord, chunks: NewLogChunk[], refused: RefusedLogChunk[]): void {
    const bytes = chunks.filter((c) => refused.some((r) => r.stream === c.stream && r.offset === c.offset)).reduce((sum, c) => sum + c.data.length, 0);
    this.observer.logBytesRefused(bytes);
    this.logger.error("a worker's log chunks start past the stored end of their log and are not stored", { dagName: run.dagName, dagRunId: run.dagRunId, attemptId: run.attemptId, bytes, refused });
  }

  private refuse(key: string): ReportOutcome {
    this.known.delete(key);
    return { appliedSeq: 0, stale: true, finished: false };
  }

  /**
   * Where this coordinator stored the attempt's streams up to, kept when the attempt is read
   * again (each batch, for a worker whose heartbeats another coordinator answers): only a hint,
   * since the statement that stores chunks checks it.
   */
  private streamsOf(key: string): OwnLogStreams {
    return this.known.get(key)?.streams ?? new Map<string, LogStreamInfo>();
  }

  /** The attempt as the database has it; undefined when it is not this worker's current one. */
  private async readAttempt(workerId: string, ref: TaskRef): Promise<KnownAttempt | undefined> {
    const run = await getRun(this.db, ref.dagName, ref.dagRunId);
    if (run === undefined || run.attemptId !== ref.attemptId || run.workerId !== workerId) return undefined;
    const attempt = { run, workerId, appliedSeq: run.reportSeq, ended: isTerminalRunStatus(run.status), streams: this.streamsOf(attemptKey(ref)) };
    this.known.set(attemptKey(ref), attempt);
    return attempt;
  }
}
