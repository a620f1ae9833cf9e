/**
 * How a reporter's first report of a burst waits for the rest: up to `ms`, or less when the run
 * is over and nothing more will come (close()). A short run's start, output and end then travel
 * in one write, and its end is never held back by the wait.
 */
export class BatchWindow {
  private closeOpen: (() => void) | undefined;

  constructor(private readonly ms: number) {}

  /** Resolves after `ms`, or as soon as close() is called. */
  wait(): Promise<void> {
    return new Promise((resolve) => {
      const close = (): void => {
        clearTimeout(timer);
        this.closeOpen = undefined;
        resolve();
      };
      const timer = setTimeout(close, this.ms);
      this.closeOpen = close;
    });
  }

  /** Ends the wait now open, if any. */
  close(): void {
    this.closeOpen?.();
  }
}
