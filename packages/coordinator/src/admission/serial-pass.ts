/**
 * Runs an admission pass on demand, never two at once: a request that arrives during a pass is
 * folded into one more pass after it, so bursts of wake-ups cost at most two passes. A pass
 * may ask for another (it filled a whole batch) by returning true.
 */
export class SerialPass {
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(private readonly pass: () => Promise<boolean>) {}

  request(): void {
    if (this.stopped) return;
    if (this.running !== undefined) {
      this.again = true;
      return;
    }
    this.running = this.loop().finally(() => {
      this.running = undefined;
    });
  }

  /** No further passes; resolves when the current one ends. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }

  private async loop(): Promise<void> {
    do {
      this.again = false;
      if (await this.pass()) this.again = true;
    } while (this.again && !this.stopped);
  }
}
