/**
 * How a reporter's first report of a burst waits for the rest: up to `ms`, or not at all once the
 * run is over (end()). A short run's start, output and end then travel in one write, and nothing
 * reported after the end, nor the end itself, is held back by a wait.
 */
export class BatchWindow {
  private closeOpen: (() => void) | undefined;
  private ended = false;

  constructor(private readonly ms: number) {}

  /** Resolves after `ms`, at once after end(), or as soon as end() is called. */
  wait(): Promise<void> {
    if (this.ended) return Promise.resolve();
    return new Promise((resolve) => {
      const close = (): void => {
        clearTimeout(timer);
        // A reporter waits once at a time; should a second wait open, an older one ending must not disown it.
        if (this.closeOpen === close) this.closeOpen = undefined;
        resolve();
      };
      const timer = setTimeout(close, this.ms);
      this.closeOpen = close;
    });
  }

  /** The run is over: the wait now open ends, and later ones do not wait. */
  end(): void {
    this.ended = true;
    this.closeOpen?.();
  }
}
