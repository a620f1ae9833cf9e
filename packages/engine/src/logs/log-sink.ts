import { createWriteStream, openSync, type WriteStream } from 'node:fs';
import { Writable } from 'node:stream';
import type { RunReporter } from '../types.js';
import type { SecretMasker } from './secret-masker.js';

/** A line longer than this is flushed unmasked-at-boundary rather than held forever (progress bars). */
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
 * secrets exist, text is masked a line at a time so a secret split across reads is still caught.
 */
export class LogSink extends Writable {
  private readonly file: WriteStream;
  private readonly tee: WriteStream | undefined;
  private offset = 0;
  private pending = '';
  private captured: string[] = [];
  private capturedBytes = 0;
  truncated = false;

  constructor(private readonly options: LogSinkOptions) {
    super({ decodeStrings: true });
    // Opened synchronously: a create is cheaper without the thread-pool round trip (see the runner).
    this.file = createWriteStream(options.path, { fd: openSync(options.path, 'a') });
    this.tee = options.teePath !== undefined ? createWriteStream(options.teePath, { flags: 'a' }) : undefined;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (!this.options.masker.active) {
      this.emitText(chunk, callback);
      return;
    }
    this.pending += chunk.toString('utf8');
    const cut = this.pending.length > MAX_PENDING ? this.pending.length : this.pending.lastIndexOf('\n') + 1;
    if (cut === 0) {
      callback();
      return;
    }
    const ready = this.pending.slice(0, cut);
    this.pending = this.pending.slice(cut);
    this.emitText(Buffer.from(this.options.masker.mask(ready), 'utf8'), callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    const rest = this.pending.length > 0 ? Buffer.from(this.options.masker.mask(this.pending), 'utf8') : undefined;
    this.pending = '';
    const close = (): void => {
      this.tee?.end();
      this.file.end(() => callback());
    };
    if (rest !== undefined) this.emitText(rest, close);
    else close();
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
    this.tee?.write(data);
    this.file.write(data, (error) => callback(error ?? null));
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
