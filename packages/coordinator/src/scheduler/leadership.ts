import { acquireSchedulerLease, releaseSchedulerLease, type Db } from '@trellis/store';
import { toError } from '@trellis/core';
import type { Logger } from '../logging/logger.js';

/**
 * Scheduler leadership through the lease row: renewed every third of its lifetime; a renewal
 * that fails for any reason (lost, or no database) ends leadership at once, before the lease
 * could expire and a standby take over. Every tick re-checks the token in its transaction.
 */
export class SchedulerLeadership {
  private token: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly db: Db,
    readonly holder: string,
    private readonly ttlMs: number,
    private readonly logger: Logger,
  ) {}

  /** The fencing token while this coordinator leads. */
  get current(): number | undefined {
    return this.token;
  }

  async start(): Promise<void> {
    await this.renew();
    this.schedule();
  }

  /** A tick found the lease gone: stop scheduling until a renewal wins it back. */
  lost(): void {
    if (this.token !== undefined) this.logger.warn('scheduler leadership lost', { holder: this.holder });
    this.token = undefined;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.token === undefined) return;
    this.token = undefined;
    await releaseSchedulerLease(this.db, this.holder).catch(() => undefined);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.renew().finally(() => this.schedule()), Math.max(200, Math.floor(this.ttlMs / 3)));
    this.timer.unref();
  }

  private async renew(): Promise<void> {
    try {
      const token = await acquireSchedulerLease(this.db, this.holder, this.ttlMs);
      if (token !== undefined && this.token === undefined) this.logger.info('scheduler leadership taken', { holder: this.holder, token });
      if (token === undefined) this.lost();
      else this.token = token;
    } catch (error) {
      this.logger.error('scheduler lease renewal failed; not scheduling', { error: toError(error) });
      this.lost();
    }
  }
}
