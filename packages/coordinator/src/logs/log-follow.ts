import { isTerminalRunStatus, NotFoundError, toError } from '@trellis/core';
import { getRun, logBytes, type Db, type LogStreamRef, type RunRecord } from '@trellis/store';
import type { Logger } from '../logging/logger.js';
import type { LogFollowers } from './log-followers.js';
import { tailStart, wholeCharactersAtEnd } from './log-pager.js';
import type { LogTarget, RunQueries } from '../runs/run-queries.js';

/** How often a follower looks by itself: the safety net for a lost notification, and how it sees the run end. */
const LOOK_MS = 1000;
/** Most bytes one event carries. */
const READ_BYTES = 256 * 1024;

/** New text of a followed log: of attempt `attemptId`, up to byte `offset` of that attempt's log (where a resumed stream starts). */
export interface LogUpdate {
  attemptId: string;
  offset: number;
  content: string;
}

/** Where a client resumes: after byte `offset` of attempt `attemptId`'s log (no attempt: a position that names none). */
export interface LogResume {
  attemptId?: string;
  offset: number;
}

/** Where a follower starts: where a client resumes, or (`tail`) at the last `tail` lines of the current attempt's log. */
export type LogStart = LogResume | { tail: number };

export interface LogFollowHandlers {
  send(update: LogUpdate): void;
  /** The run ended and everything it logged was sent. */
  end(status: number): void;
  /** Following stopped without an end (the coordinator shuts down). */
  close(): void;
}

export interface LogFollowDeps {
  db: Db;
  queries: RunQueries;
  followers: LogFollowers;
  logger: Logger;
}

/**
 * One follower of a run's log: sends what was stored after its offset each time the log grows,
 * whichever coordinator stored it, and ends once the run has ended and all was sent. Reads go
 * from the database from the last offset sent, so a follower never misses or repeats a byte;
 * a new attempt (a retry) is followed from its start.
 */
class LogFollower {
  private sent: number;
  private attemptId: string;
  /** Lines to start with, until the log is first found: then the follower starts where they do. */
  private tail: number | undefined;
  private busy = false;
  private again = false;
  private closed = false;

  constructor(
    private readonly deps: LogFollowDeps,
    private readonly run: RunRecord,
    private readonly target: LogTarget,
    start: LogStart,
    private readonly handlers: Pick<LogFollowHandlers, 'send' | 'end'>,
  ) {
    // An offset is a position in one attempt's log: in any other attempt (a retry) it means nothing, and the log is sent from its start.
    this.sent = 'offset' in start && start.attemptId === run.attemptId ? start.offset : 0;
    this.tail = 'tail' in start ? start.tail : undefined;
    this.attemptId = run.attemptId;
  }

  close(): void {
    this.closed = true;
  }

  /** Reads and sends what is new; calls made while one is going make it look once more. */
  async look(): Promise<void> {
    if (this.busy) {
      this.again = true;
      return;
    }
    this.busy = true;
    try {
      do {
        this.again = false;
        await this.sendNew();
      } while (this.again && !this.closed);
    } finally {
      this.busy = false;
    }
  }

  private async sendNew(): Promise<void> {
    const run = await getRun(this.deps.db, this.run.dagName, this.run.dagRunId);
    if (run === undefined || this.closed) return;
    if (run.attemptId !== this.attemptId) {
      this.attemptId = run.attemptId;
      this.sent = 0;
    }
    // Whether the run had ended before the read: then what the read finds is all there is.
    const ended = isTerminalRunStatus(run.status);
    const ref = await this.deps.queries.logStream(run, this.target).catch((error: unknown) => {
      if (error instanceof NotFoundError) return undefined;
      throw error;
    });
    const tailed = this.tail !== undefined;
    if (this.tail !== undefined && ref !== undefined) this.sent = await tailStart(this.deps.db, ref, this.tail);
    this.tail = undefined;
    const sent = ref !== undefined && (await this.sendFrom(ref, ended));
    // A tail is the log as it is now, also when that is nothing: the client need not guess whether more is coming.
    if (tailed && !sent && !this.closed) this.handlers.send({ attemptId: this.attemptId, offset: this.sent, content: '' });
    if (ended && !this.closed) this.handlers.end(run.status);
  }

  /** Sends what is stored after the last offset sent; resolves to whether there was any. */
  private async sendFrom(ref: LogStreamRef, ended: boolean): Promise<boolean> {
    for (let sent = false; ; sent = true) {
      const bytes = await logBytes(this.deps.db, ref, this.sent, this.sent + READ_BYTES);
      if (bytes.length === 0 || this.closed) return sent;
      // A character cut by a piece boundary waits for its rest; at the end there is no rest.
      const last = bytes.length < READ_BYTES;
      const held = ended && last ? 0 : bytes.length - wholeCharactersAtEnd(bytes).length;
      if (bytes.length - held === 0) return sent;
      this.sent += bytes.length - held;
      this.handlers.send({ attemptId: this.attemptId, offset: this.sent, content: bytes.subarray(0, bytes.length - held).toString('utf8') });
      if (last) return true;
    }
  }
}

/** Following run logs as they grow (the log event streams). */
export class LogFollow {
  constructor(private readonly deps: LogFollowDeps) {}

  /**
   * Follows a log of run `name`/`dagRunId` (`latest` allowed) from `start` (from the start of
   * the current attempt's log when it resumes another attempt's); resolves, once the run is
   * found, to the function that stops following.
   */
  async open(name: string, dagRunId: string, target: LogTarget, start: LogStart, handlers: LogFollowHandlers): Promise<() => void> {
    const run = await this.deps.queries.resolve(name, dagRunId);
    // An ended run's steps are all known: a name that is none of them is not found (a running one may not have reached it).
    if (isTerminalRunStatus(run.status)) await this.deps.queries.logStream(run, target);
    const follower = new LogFollower(this.deps, run, target, start, {
      send: (update) => handlers.send(update),
      end: (status) => {
        stop();
        handlers.end(status);
      },
    });
    const look = (): void =>
      void follower.look().catch((error: unknown) => this.deps.logger.warn('could not read a followed log; trying again', { dagRunId: run.dagRunId, error: toError(error) }));
    const unfollow = await this.deps.followers.follow(run.id, look, () => {
      stop();
      handlers.close();
    });
    const timer = setInterval(look, LOOK_MS);
    timer.unref();
    const stop = (): void => {
      follower.close();
      clearInterval(timer);
      unfollow();
    };
    look();
    return stop;
  }
}
