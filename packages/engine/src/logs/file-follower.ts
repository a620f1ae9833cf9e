import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import type { RunReporter } from '../types.js';

/** Largest chunk reported at once: a step that printed megabytes is sent in pieces. */
const MAX_CHUNK = 256 * 1024;
/** How often a running step's files are read for new bytes (live logs on a remote host). */
const FOLLOW_INTERVAL_MS = 500;

interface Followed {
  fd: number;
  path: string;
  stream: string;
  offset: number;
}

/**
 * Reports what a process appends to its log files, as chunks at their byte offsets, by reading
 * the files rather than piping the output through Node: a step writing straight to its files
 * costs no pipes, streams or per-write callbacks, and a one-step run that prints nothing costs
 * two fstat calls here. Bytes already in a file (an earlier retry) are not reported again.
 */
export class FileFollower {
  private readonly files: Followed[];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly reporter: RunReporter,
    targets: Array<{ path: string; stream: string }>,
  ) {
    this.files = targets.map(({ path, stream }) => {
      // Created here when the process that spawns the step has not yet done so.
      const fd = openSync(path, 'a+');
      return { fd, path, stream, offset: fstatSync(fd).size };
    });
    this.timer = setInterval(() => this.readNew(), FOLLOW_INTERVAL_MS);
    this.timer.unref();
  }

  /** Reads what is left and closes the files. */
  finish(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.readNew();
    for (const file of this.files) closeSync(file.fd);
  }

  private readNew(): void {
    for (const file of this.files) {
      const size = fstatSync(file.fd).size;
      while (file.offset < size) {
        const data = Buffer.allocUnsafe(Math.min(MAX_CHUNK, size - file.offset));
        const read = readSync(file.fd, data, 0, data.length, file.offset);
        if (read === 0) break;
        this.reporter.onLog({ stream: file.stream, path: file.path, offset: file.offset, data: data.subarray(0, read) });
        file.offset += read;
      }
    }
  }
}
