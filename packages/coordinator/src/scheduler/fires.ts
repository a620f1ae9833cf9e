import { dueTimes, type Dag, type ScheduleEntry } from '@trellis/core';
import { MINUTE_MS } from './clock.js';

/** Missed runs replayed per entry after downtime, at most: a long outage never floods the queues. */
export const MAX_CATCHUP_RUNS = 10;

export type FireKind = 'start' | 'stop' | 'restart';

export interface Fire {
  kind: FireKind;
  entry: ScheduleEntry;
  /** The scheduled time (a cron run time, or a one-off's `at`). */
  at: Date;
}

/**
 * Cron run times of an entry due in (from, until]. Times before this tick's minute are missed
 * runs (downtime, a leader change): they are replayed only within the DAG's catch_up window,
 * the newest MAX_CATCHUP_RUNS of them; without the field nothing missed is replayed.
 */
function cronFires(entry: ScheduleEntry, dag: Dag, from: Date, until: Date, timezone: string, replay: boolean): Date[] {
  const lastMinute = until.getTime() - MINUTE_MS;
  // Asked apart from the missed ones: after a long outage those could be more than dueTimes returns.
  const current = dueTimes(entry, new Date(Math.max(from.getTime(), lastMinute)), until, timezone);
  if (!replay || dag.catchupWindowMs === undefined || from.getTime() >= lastMinute) return current;
  const oldest = Math.max(from.getTime(), until.getTime() - dag.catchupWindowMs);
  const missed = dueTimes(entry, new Date(oldest), new Date(lastMinute), timezone).slice(-MAX_CATCHUP_RUNS);
  return [...missed, ...current];
}

/**
 * What a DAG's schedule asks for in one tick: start, stop and restart entries due in
 * (from, until], and one-offs whose time has come and that were not consumed yet (they stay
 * pending, tick after tick, until a run is made for them). `timezone` is asked only for a cron entry.
 */
export function firesFor(dag: Dag, from: Date, until: Date, timezone: () => string, consumed: ReadonlySet<string>, replay: boolean): Fire[] {
  const fires: Fire[] = [];
  for (const [kind, entries] of [['start', dag.schedule.start], ['stop', dag.schedule.stop], ['restart', dag.schedule.restart]] as const) {
    for (const entry of entries) {
      if (entry.kind === 'at') {
        if (kind === 'start' && !consumed.has(entry.at) && new Date(entry.at).getTime() <= until.getTime()) fires.push({ kind, entry, at: new Date(entry.at) });
        continue;
      }
      for (const at of cronFires(entry, dag, from, until, timezone(), replay && kind === 'start')) fires.push({ kind, entry, at });
    }
  }
  return fires.sort((a, b) => a.at.getTime() - b.at.getTime());
}

/** The deterministic run id of a scheduled time: a replayed or repeated tick finds the run already made. */
export function scheduledRunId(fire: Fire): string {
  const stamp = fire.at.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  return `${fire.entry.kind === 'at' ? 'at' : fire.kind === 'restart' ? 'restart' : 'scheduled'}-${stamp}`;
}
