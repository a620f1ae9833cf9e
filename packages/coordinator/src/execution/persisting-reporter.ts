import type { LogChunk, RunOutputs, RunReporter, RunSnapshot } from '@trellis/engine';
import { appendLogChunks, appendOwnLogChunks, MAX_LOG_PIECE, saveOutputs, type Db, type NewLogChunk, type OwnLogStreams, type RunRecord } from '@trellis/store';
import { relativeUnder, toError } from '@trellis/core';
import type { Logger } from '../logging/logger.js';
import { persistSnapshot } from './snapshot-store.js';
import { attemptLogDir } from '../logs/log-streams.js';
import type { LogFollowers } from '../logs/log-followers.js';

const BATCH_WINDOW_MS = 15;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Writes a local run's reports to PostgreSQL. Snapshots are complete, so only the newest one
 * matters: while a write is in flight, newer snapshots replace each other and the latest is
 * written next. Every write is a compare-and-swap on the run's attempt, so nothing moves a
 * run backwards. Log chunks gathered meanwhile are stored first, in one transaction, so a client
 * that sees a step or the run end finds its output, on any coordinator.
 */
export class PersistingReporter implements RunReporter {
  private pending: RunSnapshot | undefined;
  private logs: NewLogChunk[] = [];
  /** Where this run's streams end in the database: this reporter is their only writer. */
  private readonly streams: OwnLogStreams = new Map();
  private writing: Promise<void> | undefined;
  private outputs: RunOutputs | undefined;
  private readonly runDir: string;

  constructor(
    private readonly db: Db,
    private readonly run: Pick<RunRecord, 'id' | 'attemptId' | 'logFile'>,
    private readonly logger: Logger,
    private readonly followers: Pick<LogFollowers, 'appended'>,
  ) {
    this.runDir = attemptLogDir(run);
  }

  onStatus(snapshot: RunSnapshot): void {
    this.pending = snapshot;
    this.schedule();
  }

  onLog(chunk: LogChunk): void {
    // The engine writes inside the attempt's folder; the stream is the file's name there.
    const stream = relativeUnder(this.runDir, chunk.path);
    if (stream === undefined) return;
    const last = this.logs.at(-1);
    // Adjacent writes of one stream go as one chunk (a busy step writes many small ones), up to a stored piece.
    if (last !== undefined && last.stream === stream && last.offset + last.data.length === chunk.offset && last.data.length + chunk.data.length <= MAX_LOG_PIECE) last.data = Buffer.concat([last.data, chunk.data]);
    else this.logs.push({ stream, offset: chunk.offset, data: Buffer.from(chunk.data) });
    this.schedule();
  }

  onOutputs(outputs: RunOutputs): void {
    this.outputs = outputs;
  }

  /** Resolves when everything reported so far is written. */
  async settled(): Promise<void> {
    while (this.writing !== undefined) await this.writing;
    // A run without outputs stores none: the outputs endpoint then answers with empty metadata, as the contract says.
    if (this.outputs !== undefined && Object.keys(this.outputs.outputs).length > 0) await saveOutputs(this.db, this.run.id, this.outputs.metadata, this.outputs.outputs);
  }

  /**
   * The first report of a burst waits a moment for the rest: a short run's start, output, step
   * and end then cost one log transaction and one status write instead of several. The run
   * already shows Running from admission.
   */
  private schedule(): void {
    this.writing ??= sleep(BATCH_WINDOW_MS).then(() => this.drain());
  }

  private async drain(): Promise<void> {
    try {
      while (this.pending !== undefined || this.logs.length > 0) {
        await this.storeLogs();
        const snapshot = this.pending;
        this.pending = undefined;
        if (snapshot !== undefined) await persistSnapshot(this.db, this.run.id, snapshot).catch((error: unknown) => this.logger.error('could not persist run status', { runId: this.run.id, dagRunId: snapshot.dagRunId, error: toError(error) }));
      }
    } finally {
      this.writing = undefined;
    }
  }

  private async storeLogs(): Promise<void> {
    const chunks = this.logs;
    if (chunks.length === 0) return;
    this.logs = [];
    try {
      if (await appendOwnLogChunks(this.db, this.run.id, this.run.attemptId, chunks, this.streams)) {
        this.followers.appended(this.run.id);
        return;
      }
      // Not where this reporter thought (an earlier write failed): the locking path says where.
      const { stored, refused, ends } = await appendLogChunks(this.db, this.run.id, this.run.attemptId, chunks);
      for (const [stream, end] of ends) this.streams.set(stream, end);
      if (stored > 0) this.followers.appended(this.run.id);
      // The stored log stops where the failed write left it rather than holding a hole.
      if (refused.length > 0) this.logger.warn('log chunks past the stored end were not stored', { runId: this.run.id, refused });
    } catch (error) {
      this.logger.error('could not store run logs', { runId: this.run.id, error: toError(error) });
    }
  }
}
