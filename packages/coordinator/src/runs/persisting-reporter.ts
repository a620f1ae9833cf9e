import { RunStatus, isTerminalRunStatus } from '@trellis/core';
import type { LogChunk, RunOutputs, RunReporter, RunSnapshot } from '@trellis/engine';
import { replaceNodes, saveOutputs, updateRunStatus, type Db, type NodeRow } from '@trellis/store';
import type { Logger } from '../logging/logger.js';
import { toError } from '../errors/normalize.js';

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
    this.writing ??= this.drain();
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
    if (this.outputs !== undefined) await saveOutputs(this.db, this.runId, this.outputs.metadata, this.outputs.outputs);
  }

  private async drain(): Promise<void> {
    try {
      while (this.pending !== undefined) {
        const snapshot = this.pending;
        this.pending = undefined;
        await this.write(snapshot).catch((error: unknown) => this.logger.error('could not persist run status', { runId: this.runId, dagRunId: snapshot.dagRunId, error: toError(error) }));
      }
    } finally {
      this.writing = undefined;
    }
  }

  private async write(snapshot: RunSnapshot): Promise<void> {
    const terminal = isTerminalRunStatus(snapshot.status);
    const nodes: NodeRow[] = [
      ...snapshot.nodes.map((data, position): NodeRow => ({ kind: 'step', position, stepName: data.step.name, data })),
      ...Object.entries(snapshot.handlers).map(([kind, data], position): NodeRow => ({ kind: 'handler', position, stepName: kind, data })),
    ];
    await this.db.transaction(async (tx) => {
      const moved = await updateRunStatus(tx, {
        runId: this.runId,
        attemptId: snapshot.attemptId,
        expected: [RunStatus.Running, RunStatus.Waiting],
        next: snapshot.status === RunStatus.NotStarted ? RunStatus.Running : snapshot.status,
        ...(terminal ? { finishedAt: snapshot.finishedAt !== '' ? new Date(snapshot.finishedAt) : new Date(), error: snapshot.error } : {}),
      });
      if (moved) await replaceNodes(tx, this.runId, snapshot.attemptId, nodes);
    });
  }
}
