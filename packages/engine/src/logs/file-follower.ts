import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import type { RunReporter } from '../types.js';

/** Largest chunk reported at once: a step that printed megabytes is sent in pieces. */
const MAX_CHUNK = 256 * 1024;
/** How often a running step's files are read for new bytes (live logs on a remote host). */
const FOLLOW_INTERVAL_MS = 500;

interface Followed {
  path: string;
  stream: string;
  offset: number;
  /** Opened at the first read that finds the file: the process that spawns the step creates it. */
  fd: number | undefined;
  /** A read failed (the path is not a readable file): nothing more is reported from it. */
  failed: boolean;
}

/**
 * Reports what a process appends to its log files, as chunks at their byte offsets, by reading
 * the files rather than piping the output through Node: a step writing straight to its files
 * costs no pipes, streams or per-write callbacks, and a one-step run that prints nothing costs
 * a stat before it starts and an open and fstat when it ends. The files are created by the
 * process that spawns the step (often a spawner process), not here: a creation is the costly
 * part on a slow disk. Bytes already in a file before the step (an earlier retry) are not
 * reported again.
 */
export class FileFollower {
  private readonly files: Followed[];
  private timer: NodeJS.Timeout | undefined;

  /** Call before the step's process is started: what the files hold then is not reported. */
  constructor(
    private readonly reporter: RunReporter,
    targets: Array<{ path: string; stream: string }>,
  ) {
    this.files = targets.map(({ path, stream }) => ({ path, stream, offset: sizeBefore(path), fd: undefined, failed: false }));
    this.timer = setInterval(() => this.readNew(), FOLLOW_INTERVAL_MS);
    this.timer.unref();
  }

  /** Reads what is left and closes the files. */
  finish(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.readNew();
    for (const file of this.files) if (file.fd !== undefined) closeSync(file.fd);
  }

  private readNew(): void {
    for (const file of this.files) {
      if (file.failed) continue;
      try {
        this.readFile(file);
      } catch {
        // Not a readable file (a directory where the log belongs): the step's own open fails and says why.
        file.failed = true;
      }
    }
  }

  private readFile(file: Followed): void {
    file.fd ??= openIfThere(file.path);
    if (file.fd === undefined) return;
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

/** The size of a file that may not exist yet (0 then). */
function sizeBefore(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

function openIfThere(path: string): number | undefined {
  try {
    return openSync(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
