import { statfs } from 'node:fs/promises';
import { cpus, freemem, loadavg, totalmem } from 'node:os';
import { toError } from '@trellis/core';
import type { Logger } from '../logging/logger.js';

export const SAMPLE_EVERY_MS = 5000;
/** 24 hours of samples: the ring never grows past this. */
const CAPACITY = (24 * 60 * 60 * 1000) / SAMPLE_EVERY_MS;

export interface ResourceSample {
  at: number;
  cpuPercent: number;
  memoryPercent: number;
  diskPercent: number;
  load1: number;
}

interface CpuTimes {
  idle: number;
  total: number;
}

function cpuTimes(): CpuTimes {
  return cpus().reduce(
    (sum, cpu) => {
      const t = cpu.times;
      return { idle: sum.idle + t.idle, total: sum.total + t.user + t.nice + t.sys + t.idle + t.irq };
    },
    { idle: 0, total: 0 },
  );
}

const round = (value: number): number => Math.round(value * 10) / 10;

/**
 * Host CPU, memory, disk (of the data directory's file system) and 1-minute load, sampled every
 * five seconds into a bounded in-memory ring: the last 24 hours, about 17,000 samples.
 */
export class ResourceHistory {
  private readonly samples: ResourceSample[] = [];
  private previous = cpuTimes();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly diskPath: string,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.sample(), SAMPLE_EVERY_MS);
    this.timer.unref();
    void this.sample();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Samples of the last `durationMs`, oldest first. */
  since(durationMs: number, now = Date.now()): ResourceSample[] {
    const from = now - durationMs;
    return this.samples.filter((s) => s.at >= from);
  }

  private async sample(): Promise<void> {
    try {
      const times = cpuTimes();
      const busy = times.total - this.previous.total - (times.idle - this.previous.idle);
      const cpuPercent = times.total > this.previous.total ? (busy / (times.total - this.previous.total)) * 100 : 0;
      this.previous = times;
      // The data directory may not exist yet (PostgreSQL mode): then the root file system.
      const disk = await statfs(this.diskPath).catch(() => statfs('/')).catch(() => undefined);
      const diskPercent = disk !== undefined && disk.blocks > 0 ? ((disk.blocks - disk.bfree) / disk.blocks) * 100 : 0;
      this.samples.push({
        at: Date.now(),
        cpuPercent: round(cpuPercent),
        memoryPercent: round(((totalmem() - freemem()) / totalmem()) * 100),
        diskPercent: round(diskPercent),
        load1: round(loadavg()[0] ?? 0),
      });
      if (this.samples.length > CAPACITY) this.samples.splice(0, this.samples.length - CAPACITY);
    } catch (error) {
      this.logger.warn('resource sample failed', { error: toError(error) });
    }
  }
}
