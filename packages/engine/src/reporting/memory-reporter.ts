import type { LogChunk, RunOutputs, RunReporter, RunSnapshot } from '../types.js';

/** Keeps everything a run reported, in memory: for tests and for hosts that only need the end state. */
export class MemoryReporter implements RunReporter {
  readonly snapshots: RunSnapshot[] = [];
  readonly chunks: LogChunk[] = [];
  outputs: RunOutputs | undefined;
  private readonly listeners: Array<(snapshot: RunSnapshot) => void> = [];

  onStatus(snapshot: RunSnapshot): void {
    this.snapshots.push(snapshot);
    for (const listener of this.listeners) listener(snapshot);
  }

  onLog(chunk: LogChunk): void {
    this.chunks.push(chunk);
  }

  onOutputs(outputs: RunOutputs): void {
    this.outputs = outputs;
  }

  get last(): RunSnapshot | undefined {
    return this.snapshots[this.snapshots.length - 1];
  }

  /** Resolves with the first snapshot (past or future) that satisfies `predicate`. */
  waitFor(predicate: (snapshot: RunSnapshot) => boolean): Promise<RunSnapshot> {
    const seen = this.snapshots.find(predicate);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve) => {
      const listener = (snapshot: RunSnapshot): void => {
        if (!predicate(snapshot)) return;
        this.listeners.splice(this.listeners.indexOf(listener), 1);
        resolve(snapshot);
      };
      this.listeners.push(listener);
    });
  }

  /** All text one stream logged, in order. */
  text(stream: string): string {
    return Buffer.concat(this.chunks.filter((c) => c.stream === stream).map((c) => c.data)).toString('utf8');
  }
}
