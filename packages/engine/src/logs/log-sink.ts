import { closeSync, fstatSync, openSync, writeSync } from 'node:fs';
import { Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { toError } from '@trellis/core';
import type { RunReporter } from '../types.js';
import type { SecretMasker } from './secret-masker.js';

/** A line longer than this is flushed without waiting for its end (progress bars), all but a possible secret's start. */
const MAX_PENDING = 64 * 1024;

export interface LogSinkOptions {
  path: string;
  stream: string;
  reporter: RunReporter;
  masker: SecretMasker;
  /** Keep up to this many bytes of (masked) text for `output:` and `continue_on.output`. */
  captureBytes?: number;
  /** Also write everything to this file (a step's `stdout:`/`stderr:` setting). */
  teePath?: string;
}

/**
 * Where a step's output goes: appended to its log file, reported as chunks with byte offsets
 * (so a worker can stream them and a resend never duplicates text), secrets masked. When
 * secrets exist, text is masked a line at a time, and what may be the start of a secret is held
 * back until the next write, so a secret split across reads or flushes is still caught.
 */
export class LogSink extends Writable {
  private readonly fd: number;
  private fileClosed = false;
  private readonly tee: number | undefined;
  /** Why the `teePath` file could not be opened; the step must not run without its copy. */
  readonly teeError: string | undefined;
  private offset = 0;
  private pending = '';
  /** Keeps a UTF-8 character cut by a read boundary whole for the next write. */
  private readonly decoder = new StringDecoder('utf8');
  private captured: string[] = [];
  private capturedBytes = 0;
  truncated = false;

  constructor(private readonly options: LogSinkOptions) {
    super({ decodeStrings: true });
    // Synchronous file calls, as for the run log: page-cache appends cost microseconds, while a
    // write stream's thread-pool round trips cost several times that in CPU on every chunk.
    this.fd = openSync(options.path, 'a');
    // A retry appends to the same file: its chunks start where the earlier execution's ended.
    this.offset = fstatSync(this.fd).size;
    // The copy is written in step with the log, so it is complete when the step's sinks end.
    if (options.teePath !== undefined) {
      try {
        this.tee = openSync(options.teePath, 'a');
      } catch (error) {
        this.teeError = `cannot open ${options.teePath}: ${(error as NodeJS.ErrnoException).code ?? toError(error).message}`;
      }
    }
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (!this.options.masker.active) {
      this.emitText(chunk, callback);
      return;
    }
    this.pending += this.decoder.write(chunk);
    const end = this.pending.length > MAX_PENDING ? this.pending.length : this.pending.lastIndexOf('\n') + 1;
    const cut = this.options.masker.safeLength(this.pending.slice(0, end));
    if (cut === 0) {
      callback();
      return;
    }
    const ready = this.pending.slice(0, cut);
    this.pending = this.pending.slice(cut);
    this.emitText(Buffer.from(this.options.masker.mask(ready), 'utf8'), callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.pending += this.decoder.end();
    const rest = this.pending.length > 0 ? Buffer.from(this.options.masker.mask(this.pending), 'utf8') : undefined;
    this.pending = '';
    const close = (error?: Error | null): void => {
      this.closeFile();
      callback(error);
    };
    if (rest !== undefined) this.emitText(rest, close);
    else close();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.closeFile();
    callback(error);
  }

  private closeFile(): void {
    if (this.fileClosed) return;
    this.fileClosed = true;
    closeSync(this.fd);
    if (this.tee !== undefined) closeSync(this.tee);
  }

  /** The captured text (trimmed), and whether it hit the capture limit. */
  capturedText(): string {
    return this.captured.join('');
  }

  private emitText(data: Buffer, callback: (error?: Error | null) => void): void {
    if (data.length === 0) {
      callback();
      return;
    }
    this.capture(data);
    this.options.reporter.onLog({ stream: this.options.stream, path: this.options.path, offset: this.offset, data });
    this.offset += data.length;
    try {
      writeSync(this.fd, data);
      if (this.tee !== undefined) writeSync(this.tee, data);
      callback();
    } catch (error) {
      callback(toError(error));
    }
  }

  private capture(data: Buffer): void {
    const limit = this.options.captureBytes;
    if (limit === undefined || this.truncated) return;
    const room = limit - this.capturedBytes;
    if (data.length > room) {
      this.captured.push(data.subarray(0, Math.max(room, 0)).toString('utf8'));
      this.capturedBytes = limit;
      this.truncated = true;
      return;
    }
    this.captured.push(data.toString('utf8'));
    this.capturedBytes += data.length;
  }
}
