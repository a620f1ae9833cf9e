/** Jittered exponential backoff: retries spread out instead of stampeding a coordinator that just came back. */
export class Backoff {
  private attempt = 0;

  constructor(
    private readonly baseMs = 200,
    private readonly maxMs = 5000,
  ) {}

  next(): number {
    const ceiling = Math.min(this.maxMs, this.baseMs * 2 ** this.attempt);
    this.attempt += 1;
    return ceiling / 2 + Math.random() * (ceiling / 2);
  }

  reset(): void {
    this.attempt = 0;
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
