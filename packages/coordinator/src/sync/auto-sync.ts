import { toError } from '@trellis/core';
import type { Logger } from '../logging/logger.js';
import type { SyncService } from './sync-service.js';

/** How long to wait before looking at the settings again while auto-sync is off. */
const IDLE_RECHECK_MS = 30_000;

/**
 * Auto-sync: a pull at start-up (`autoSync.onStartup`) and every `autoSync.interval` seconds.
 * The settings are read again before each pull, so a change made through any coordinator takes
 * effect within one wait; `reschedule` makes one made here take effect at once.
 */
export class AutoSync {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private running: Promise<void> | undefined;

  constructor(
    private readonly sync: SyncService,
    private readonly logger: Logger,
  ) {}

  /** Plans the first pull; the start-up pull runs in the background, so a slow repository does not hold the coordinator's start. */
  async start(): Promise<void> {
    const settings = await this.sync.settings();
    const first = settings.enabled && settings.autoSync.enabled && settings.autoSync.onStartup ? this.pull('start-up') : Promise.resolve();
    this.running = first.then(() => this.schedule()).catch((error: unknown) => {
      this.logger.warn('could not plan the next auto-sync', { error: toError(error) });
    });
  }

  /** The settings changed here: the next pull is planned from them now. */
  reschedule(): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.schedule().catch((error: unknown) => this.logger.warn('could not plan the next auto-sync', { error: toError(error) }));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private async schedule(): Promise<void> {
    const settings = await this.sync.settings();
    if (this.stopped) return;
    const active = settings.enabled && settings.autoSync.enabled;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.running = (active ? this.pull('interval') : Promise.resolve()).then(() => this.schedule()).catch((error: unknown) => {
        this.logger.warn('auto-sync failed', { error: toError(error) });
      });
    }, active ? settings.autoSync.interval * 1000 : IDLE_RECHECK_MS);
    this.timer.unref();
  }

  private async pull(why: string): Promise<void> {
    try {
      const outcome = await this.sync.pull(undefined);
      if (outcome.success) this.logger.info('auto-sync pulled', { why, message: outcome.message, conflicts: outcome.conflicts.length });
      else this.logger.warn('auto-sync could not pull', { why, message: outcome.message });
    } catch (error) {
      this.logger.warn('auto-sync failed', { why, error: toError(error) });
    }
  }
}
