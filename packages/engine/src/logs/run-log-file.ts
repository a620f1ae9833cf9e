import { closeSync, fstatSync, openSync, writeSync } from 'node:fs';
import type { RunReporter } from '../types.js';

/**
 * The run log: a few short lines per step, appended synchronously. A write stream would send
 * each line through the thread pool and cost two thread wake-ups per line, which on a one-step
 * run is a measurable share of the engine's own overhead; a page-cache append is microseconds.
 */
export class RunLogFile {
  private readonly fd: number;
  private offset = 0;
  private closed = false;

  constructor(
    readonly path: string,
    private readonly reporter: RunReporter,
  ) {
    this.fd = openSync(path, 'a');
    this.offset = fstatSync(this.fd).size;
  }

  /** Appends whole lines, already masked, and reports them as a chunk at their byte offset. */
  append(text: string): void {
    if (this.closed) return;
    const data = Buffer.from(text, 'utf8');
    writeSync(this.fd, data);
    this.reporter.onLog({ stream: 'run', path: this.path, offset: this.offset, data });
    this.offset += data.length;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
  }
}
