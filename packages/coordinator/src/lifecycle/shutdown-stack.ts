import { toError } from '@trellis/core';
import type { Logger } from '../logging/logger.js';

/**
 * What start-up opened, closed in the reverse order: by a start that fails half-way (a port in
 * use must not leave a process holding the database and timers with nothing listening), and by
 * a shutdown. A step that fails is logged and the others still run.
 */
export class ShutdownStack {
  private readonly steps: Array<{ name: string; close: () => void | Promise<void> }> = [];
  private closing: Promise<void> | undefined;

  constructor(private readonly logger: Logger) {}

  /** Registers how to close something just opened. */
  push(name: string, close: () => void | Promise<void>): void {
    this.steps.push({ name, close });
  }

  /** Closes everything once; later calls wait for the same close. */
  close(): Promise<void> {
    this.closing ??= this.closeAll();
    return this.closing;
  }

  private async closeAll(): Promise<void> {
    for (const step of this.steps.reverse()) {
      try {
        await step.close();
      } catch (error) {
        this.logger.warn('closing failed', { what: step.name, error: toError(error) });
      }
    }
  }
}
