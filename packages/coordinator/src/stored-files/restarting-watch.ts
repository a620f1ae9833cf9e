import type { FSWatcher } from 'node:fs';

/** How long after a watch stopped on an error a new one starts. */
const WATCH_RESTART_MS = 100;

/** Starts a watch of a directory (`fs.watch`, recursive or not); a test hands in one whose watcher it can fail. */
export type WatchDirectory = (root: string, listener: (event: string, name: string | null) => void) => FSWatcher;

/**
 * A directory watch that outlives its errors. Node's `fs.watch` stops for good on an error (a
 * directory that vanished while a recursive watch read it, the watched directory replaced): a
 * mirror whose watch stopped never imported a hand edit again. A new watch starts instead, and
 * `onRestarted` looks at everything again for the changes made while none ran.
 */
export class RestartingWatch {
  private readonly timers = new Set<NodeJS.Timeout>();
  private watcher: FSWatcher | undefined;
  private stopped = false;

  /** Throws when the first watch cannot start (the directory is missing): the caller decides what that means. */
  constructor(
    private readonly open: () => FSWatcher,
    private readonly onRestarted: () => void,
  ) {
    this.start();
  }

  /** Runs `fn` after `delayMs` unless the watch has stopped by then. */
  later(delayMs: number, fn: () => void): void {
    if (this.stopped) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, delayMs);
    this.timers.add(timer);
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.watcher?.close();
    this.watcher = undefined;
  }

  private start(): void {
    const current = this.open();
    this.watcher = current;
    current.on('error', () => {
      if (current !== this.watcher) return;
      current.close();
      this.watcher = undefined;
      this.later(WATCH_RESTART_MS, () => this.restart());
    });
  }

  private restart(): void {
    try {
      this.start();
    } catch {
      // The directory itself is gone for now: try again, as long as the watch is wanted.
      this.later(WATCH_RESTART_MS, () => this.restart());
      return;
    }
    this.onRestarted();
  }
}
