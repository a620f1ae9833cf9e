import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { dueTimes, nextRunTimes, nextStartRun, parseScheduleField, type ScheduleEntry } from '@trellis/core';

const iso = (dates: Date[]): string[] => dates.map((d) => d.toISOString());
const cron = (expression: string, timezone?: string): ScheduleEntry => ({ kind: 'cron', expression, ...(timezone !== undefined ? { timezone } : {}) });

describe('next runs across daylight saving (America/New_York, 2026)', () => {
  const zone = 'America/New_York';

  test('spring forward: a fixed-time job in the skipped hour runs once at 03:00 EDT', () => {
    const runs = nextRunTimes(cron('30 2 * * *'), new Date('2026-03-07T12:00:00Z'), 3, zone);
    // 02:30 EST on the 7th is 07:30Z; the 8th has no 02:30, so 03:00 EDT = 07:00Z; then 02:30 EDT = 06:30Z.
    assert.deepEqual(iso(runs), ['2026-03-08T07:00:00.000Z', '2026-03-09T06:30:00.000Z', '2026-03-10T06:30:00.000Z']);
  });

  test('spring forward: an interval job skips the times that do not exist', () => {
    const runs = dueTimes(cron('30 * * * *'), new Date('2026-03-08T05:00:00Z'), new Date('2026-03-08T09:00:00Z'), zone);
    // Local 00:30, 01:30 (EST), then 03:30, 04:30 (EDT): no 02:30.
    assert.deepEqual(iso(runs), ['2026-03-08T05:30:00.000Z', '2026-03-08T06:30:00.000Z', '2026-03-08T07:30:00.000Z', '2026-03-08T08:30:00.000Z']);
  });

  test('fall back: a fixed-time job in the repeated hour runs once, at the first occurrence (EDT)', () => {
    const runs = nextRunTimes(cron('30 1 * * *'), new Date('2026-10-31T12:00:00Z'), 2, zone);
    assert.deepEqual(iso(runs), ['2026-11-01T05:30:00.000Z', '2026-11-02T06:30:00.000Z']);
  });

  test('fall back: an interval job runs on both occurrences of the repeated hour', () => {
    const runs = dueTimes(cron('30 * * * *'), new Date('2026-11-01T04:00:00Z'), new Date('2026-11-01T08:00:00Z'), zone);
    // 00:30 EDT, 01:30 EDT, 01:30 EST, 02:30 EST: one run per real hour.
    assert.deepEqual(iso(runs), ['2026-11-01T04:30:00.000Z', '2026-11-01T05:30:00.000Z', '2026-11-01T06:30:00.000Z', '2026-11-01T07:30:00.000Z']);
  });

  test('a list in the hour field is still a fixed-time job (Vixie rule)', () => {
    const runs = dueTimes(cron('30 1,13 * * *'), new Date('2026-11-01T00:00:00Z'), new Date('2026-11-01T23:59:00Z'), zone);
    assert.deepEqual(iso(runs), ['2026-11-01T05:30:00.000Z', '2026-11-01T18:30:00.000Z']);
  });
});

describe('time zones', () => {
  test('Europe/Berlin spring forward (2026-03-29): 02:15 runs at 03:00 CEST', () => {
    const [run] = nextRunTimes(cron('15 2 * * *'), new Date('2026-03-28T12:00:00Z'), 1, 'Europe/Berlin');
    assert.equal(run?.toISOString(), '2026-03-29T01:00:00.000Z');
  });

  test('CRON_TZ overrides the configured zone', () => {
    const { value, errors } = parseScheduleField('CRON_TZ=Asia/Tokyo 0 9 * * *', 'schedule');
    assert.deepEqual(errors, []);
    const [entry] = value.start;
    assert.ok(entry);
    const [run] = nextRunTimes(entry, new Date('2026-06-01T00:00:00Z'), 1, 'America/New_York');
    assert.equal(run?.toISOString(), '2026-06-02T00:00:00.000Z');
  });

  test('nextStartRun picks the earliest entry, one-offs included, and ignores past one-offs', () => {
    const { value } = parseScheduleField(['0 12 * * *', { kind: 'at', at: '2026-06-01T10:00:00+02:00' }, { kind: 'at', at: '2020-01-01T00:00:00Z' }], 'schedule');
    assert.equal(nextStartRun(value, new Date('2026-06-01T00:00:00Z'), 'UTC')?.toISOString(), '2026-06-01T08:00:00.000Z');
    assert.equal(nextStartRun(value, new Date('2026-06-01T09:00:00Z'), 'UTC')?.toISOString(), '2026-06-01T12:00:00.000Z');
  });

  test('dueTimes is bounded', () => {
    const runs = dueTimes(cron('* * * * *'), new Date('2026-01-01T00:00:00Z'), new Date('2026-02-01T00:00:00Z'), 'UTC');
    assert.equal(runs.length, 1000);
  });
});
