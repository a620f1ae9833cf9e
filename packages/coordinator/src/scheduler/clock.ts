/** What the scheduler knows of time: injectable, so tests and the e2e cluster need not wait for real minutes. */
export interface SchedulerClock {
  now(): Date;
  /** Real milliseconds until the clock reads `at`. */
  msUntil(at: Date): number;
}

export const realClock: SchedulerClock = {
  now: () => new Date(),
  msUntil: (at) => Math.max(0, at.getTime() - Date.now()),
};

/**
 * A clock running `speed` times faster than real time from `anchor` (the same anchor on every
 * coordinator keeps their clocks in step). For test clusters only: configuration says so.
 */
export function scaledClock(anchor: Date, speed: number): SchedulerClock {
  const origin = anchor.getTime();
  return {
    now: () => new Date(origin + (Date.now() - origin) * speed),
    msUntil: (at) => Math.max(0, (at.getTime() - (origin + (Date.now() - origin) * speed)) / speed),
  };
}

export const MINUTE_MS = 60_000;

/** The first minute boundary at or after `time`. */
export function ceilMinute(time: Date): Date {
  return new Date(Math.ceil(time.getTime() / MINUTE_MS) * MINUTE_MS);
}

let systemZone: string | undefined;

/**
 * The zone this host's clock shows, asked of ICU when a cron entry first needs it: the lookup
 * loads ICU's time zone and calendar data, 8 MB of resident memory a coordinator without
 * schedules need not hold.
 */
export function systemTimeZone(): string {
  systemZone ??= Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  return systemZone;
}
