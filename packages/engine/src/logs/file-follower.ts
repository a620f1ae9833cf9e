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
  /** Not a file this can follow (a directory where the log belongs): the step's own open says why. */
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
    this.files = targets.map(({ path, stream }) => {
      const offset = sizeBefore(path);
      return { path, stream, offset: offset ?? 0, fd: undefined, failed: offset === undefined };
    });
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
      const fd = this.opened(file);
      if (fd === undefined) continue;
      const size = fstatSync(fd).size;
      while (file.offset < size) {
        const data = Buffer.allocUnsafe(Math.min(MAX_CHUNK, size - file.offset));
        const read = readSync(fd, data, 0, data.length, file.offset);
        if (read === 0) break;
        this.reporter.onLog({ stream: file.stream, path: file.path, offset: file.offset, data: data.subarray(0, read) });
        file.offset += read;
      }
    }
  }

  /** The file's descriptor, opened now if it exists; undefined while it cannot be read (tried again next time). */
  private opened(file: Followed): number | undefined {
    if (file.fd !== undefined || file.failed) return file.fd;
    let fd: number;
    try {
      fd = openSync(file.path, 'r');
    } catch {
      // Not created yet (or not openable now: the step's own open fails with the reason if it stays so).
      return undefined;
    }
    if (!fstatSync(fd).isFile()) {
      closeSync(fd);
      file.failed = true;
      return undefined;
    }
    file.fd = fd;
    return fd;
  }
}

/** The size of a file that may not exist yet (0 then); undefined when it cannot be a log file here. */
function sizeBefore(path: string): number | undefined {
  try {
    const stats = statSync(path);
    return stats.isFile() ? stats.size : undefined;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? 0 : undefined;
  }
}
