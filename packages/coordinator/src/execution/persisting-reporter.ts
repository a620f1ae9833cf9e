import type { LogChunk, RunOutputs, RunReporter, RunSnapshot } from '@trellis/engine';
import { saveOutputs, type Db } from '@trellis/store';
import { toError } from '@trellis/core';
import type { Logger } from '../logging/logger.js';
import { persistSnapshot } from './snapshot-store.js';

const BATCH_WINDOW_MS = 15;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Writes a local run's reports to PostgreSQL. Snapshots are complete, so only the newest one
 * matters: while a write is in flight, newer snapshots replace each other and the latest is
 * written next. Every write is a compare-and-swap on the run's attempt, so nothing moves a
 * run backwards. Log chunks need no writing: the engine wrote the files where the API reads them.
 */
export class PersistingReporter implements RunReporter {
  private pending: RunSnapshot | undefined;
  private writing: Promise<void> | undefined;
  private outputs: RunOutputs | undefined;

  constructor(
    private readonly db: Db,
    private readonly runId: number,
    private readonly logger: Logger,
  ) {}

  onStatus(snapshot: RunSnapshot): void {
    this.pending = snapshot;
    // The first snapshot of a burst waits a moment for the rest: a short run's start, step and
    // end then cost one write instead of three. The run already shows Running from admission.
    this.writing ??= sleep(BATCH_WINDOW_MS).then(() => this.drain());
  }

  onLog(_chunk: LogChunk): void {
    // The files are local; nothing to persist.
  }

  onOutputs(outputs: RunOutputs): void {
    this.outputs = outputs;
  }

  /** Resolves when everything reported so far is written. */
  async settled(): Promise<void> {
    while (this.writing !== undefined) await this.writing;
    // A run without outputs stores none: the outputs endpoint then answers with empty metadata, as the contract says.
    if (this.outputs !== undefined && Object.keys(this.outputs.outputs).length > 0) await saveOutputs(this.db, this.runId, this.outputs.metadata, this.outputs.outputs);
  }

  private async drain(): Promise<void> {
    try {
      while (this.pending !== undefined) {
        const snapshot = this.pending;
        this.pending = undefined;
        await persistSnapshot(this.db, this.runId, snapshot).catch((error: unknown) => this.logger.error('could not persist run status', { runId: this.runId, dagRunId: snapshot.dagRunId, error: toError(error) }));
      }
    } finally {
      this.writing = undefined;
    }
  }
}
