import { BatchWindow, sleep, type LogChunk, type RunOutputs, type RunReporter, type RunSnapshot } from '@trellis/engine';
import { appendLogChunks, appendOwnLogChunks, MAX_LOG_PIECE, saveOutputs, writeSnapshot, type Db, type NewLogChunk, type OwnLogStreams, type RunRecord } from '@trellis/store';
import { relativeUnder, toError } from '@trellis/core';
import type { Logger } from '../logging/logger.js';
import { snapshotWrite } from './snapshot-write.js';
import { attemptLogDir } from '../logs/log-streams.js';
import type { LogFollowers } from '../logs/log-followers.js';

/**
 * How long the first report of a burst waits for the rest. A run's end never waits for it
 * (settled() ends it), so it only delays what is seen of a run still going: a step's start,
 * its output so far. It should cover a short step's whole run on a busy host, one write per run:
 * with 16 one-step runs in flight on 2 cores a run took 70-100 ms from its first report to its
 * end, and 50 ms gave 1.43-1.52 report writes per run, 150 ms 1.03-1.04 (1,200 runs of the
 * local-executor bench, statements counted in PostgreSQL's log).
 */
const BATCH_WINDOW_MS = 150;
/**
 * Log bytes held while the database refuses writes. A stream whose next chunk would pass this
 * keeps nothing more: its stored log ends with the bytes held before it, never with a hole.
 */
export const MAX_HELD_LOG_BYTES = 32 * 1024 * 1024;
/** Failed log writes are retried after 100 ms, doubling up to 5 s ... */
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 5000;
/** ... for this long; then what is held is dropped as above, so a run never waits on a database that stays down. */
const RETRY_FOR_MS = 2 * 60 * 1000;

/**
 * Writes a local run's reports to PostgreSQL. Snapshots are complete, so only the newest one
 * matters: while a write is in flight, newer snapshots replace each other and the latest is
 * written next. Every write is a compare-and-swap on the run's attempt, so nothing moves a
 * run backwards. Log chunks gathered meanwhile are stored by the same statement, and the status
 * moves only if they were, so a client that sees a step or the run end finds its output, on any
 * coordinator.
 */
export class PersistingReporter implements RunReporter {
  private pending: RunSnapshot | undefined;
  private logs: NewLogChunk[] = [];
  private heldBytes = 0;
  /** Streams whose rest is not kept (see MAX_HELD_LOG_BYTES): storing a later chunk would leave a hole. */
  private readonly cut = new Set<string>();
  /** Where this run's streams end in the database: this reporter is their only writer. */
  private readonly streams: OwnLogStreams = new Map();
  private writing: Promise<void> | undefined;
  private readonly window: BatchWindow;
  private outputs: RunOutputs | undefined;
  private readonly runDir: string;

  constructor(
    private readonly db: Db,
    private readonly run: Pick<RunRecord, 'id' | 'attemptId' | 'logFile'>,
    private readonly logger: Logger,
    private readonly followers: Pick<LogFollowers, 'appended'>,
    /**
     * Aborted when the coordinator stops waiting for its runs (the shutdown grace is over): the
     * database is about to close, so a failed write is dropped at once instead of retried for
     * minutes, which would hold the shutdown, and the process, that long.
     */
    private readonly shuttingDown: AbortSignal,
    /** How long a burst's first report waits for the rest (tests make it long, to see it cut short). */
    batchWindowMs = BATCH_WINDOW_MS,
  ) {
    this.runDir = attemptLogDir(run);
    this.window = new BatchWindow(batchWindowMs);
  }

  onStatus(snapshot: RunSnapshot): void {
    this.pending = snapshot;
    this.schedule();
  }

  onLog(chunk: LogChunk): void {
    // The engine writes inside the attempt's folder; the stream is the file's name there.
    const stream = relativeUnder(this.runDir, chunk.path);
    if (stream === undefined || this.cut.has(stream)) return;
    if (this.heldBytes + chunk.data.length > MAX_HELD_LOG_BYTES) {
      this.cutStream(stream, `more than ${MAX_HELD_LOG_BYTES} bytes of log output waited for the database`, chunk.offset);
      return;
    }
    this.heldBytes += chunk.data.length;
    const last = this.logs.at(-1);
    // Adjacent writes of one stream go as one chunk (a busy step writes many small ones), up to a stored piece.
    if (last !== undefined && last.stream === stream && last.offset + last.data.length === chunk.offset && last.data.length + chunk.data.length <= MAX_LOG_PIECE) last.data = Buffer.concat([last.data, chunk.data]);
    else this.logs.push({ stream, offset: chunk.offset, data: Buffer.from(chunk.data) });
    this.schedule();
  }

  onOutputs(outputs: RunOutputs): void {
    this.outputs = outputs;
  }

  /**
   * Resolves when everything reported so far is written. Called once the run is over: nothing
   * more will come, so a batch window still open is cut short rather than waited out (the
   * run's queue slot is freed that much sooner).
   */
  async settled(): Promise<void> {
    this.window.end();
    while (this.writing !== undefined) await this.writing;
    // A run without outputs stores none: the outputs endpoint then answers with empty metadata, as the contract says.
    if (this.outputs !== undefined && Object.keys(this.outputs.outputs).length > 0) await saveOutputs(this.db, this.run.id, this.outputs.metadata, this.outputs.outputs);
  }

  /**
   * The first report of a burst waits a moment for the rest: a short run's start, output, step
   * and end then cost one statement instead of several. The run already shows Running from
   * admission.
   */
  private schedule(): void {
    this.writing ??= this.window.wait().then(() => this.drain());
  }

  /**
   * A status is written only after the logs gathered before it, by the same statement: when it
   * fails, the chunks go back in front of the newer ones and the status waits with them (unless
   * a newer one replaced it), so the stored log never skips what the failed write held. After
   * RETRY_FOR_MS of failures what is held is dropped, the status too.
   */
  private async drain(): Promise<void> {
    let failingSince: number | undefined;
    let delay = RETRY_FIRST_MS;
    try {
      while (this.pending !== undefined || this.logs.length > 0) {
        if (await this.store()) {
          failingSince = undefined;
          delay = RETRY_FIRST_MS;
          continue;
        }
        failingSince ??= Date.now();
        if (Date.now() - failingSince < RETRY_FOR_MS && !this.shuttingDown.aborted) {
          await sleep(delay, this.shuttingDown);
          delay = Math.min(delay * 2, RETRY_MAX_MS);
          continue;
        }
        this.dropHeld(this.shuttingDown.aborted ? 'the coordinator shut down while the database failed the write' : `the database failed every log write for ${RETRY_FOR_MS / 1000}s`);
        if (this.pending !== undefined) this.logger.error('could not persist run status', { runId: this.run.id, dagRunId: this.pending.dagRunId });
        this.pending = undefined;
      }
    } finally {
      this.writing = undefined;
    }
  }

  /** Stores the chunks and the status held; false when the database failed, both then held again. */
  private async store(): Promise<boolean> {
    const chunks = this.logs;
    const snapshot = this.pending;
    this.logs = [];
    this.pending = undefined;
    try {
      await this.write(chunks, snapshot);
      this.heldBytes -= chunks.reduce((sum, c) => sum + c.data.length, 0);
      return true;
    } catch (error) {
      this.logs = [...chunks, ...this.logs];
      this.pending ??= snapshot;
      this.logger.error('could not store run logs and status; retrying', { runId: this.run.id, error: toError(error) });
      return false;
    }
  }

  private async write(chunks: NewLogChunk[], snapshot: RunSnapshot | undefined): Promise<void> {
    const write = snapshot !== undefined ? snapshotWrite(this.run.id, snapshot) : undefined;
    const own = await appendOwnLogChunks(this.db, this.run.id, this.run.attemptId, chunks, this.streams, write);
    if (own.logsStored) {
      if (chunks.length > 0) this.followers.appended(this.run.id);
      return;
    }
    // Not where this reporter thought (a write whose outcome was lost): the locking path says where, then the status.
    const { stored, refused, ends } = await appendLogChunks(this.db, this.run.id, this.run.attemptId, chunks);
    for (const [stream, end] of ends) this.streams.set(stream, end);
    if (stored > 0) this.followers.appended(this.run.id);
    if (refused.length > 0) this.logger.error('log chunks past the stored end were not stored', { runId: this.run.id, refused });
    if (write !== undefined) await writeSnapshot(this.db, write);
  }

  /** The database stayed down for RETRY_FOR_MS, or the coordinator shut down: what is held is dropped, and its streams keep nothing more. */
  private dropHeld(reason: string): void {
    const dropped = this.logs;
    this.logs = [];
    this.heldBytes = 0;
    for (const stream of new Set(dropped.map((c) => c.stream))) this.cutStream(stream, reason, dropped.find((c) => c.stream === stream)?.offset ?? 0);
  }

  /** The stream keeps nothing from byte `from` on (what is held before it is still stored). */
  private cutStream(stream: string, reason: string, from: number): void {
    this.cut.add(stream);
    this.logger.error('a run log is cut short: the rest of its output is not stored', { runId: this.run.id, stream, reason, storedUpTo: from });
  }
}
