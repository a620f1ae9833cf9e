import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { dueTimes, nextRunTimes, type ScheduleEntry } from '@trellis/core';

const iso = (dates: Date[]): string[] => dates.map((d) => d.toISOString().replace(':00.000Z', 'Z'));
const cron = (expression: string, timezone?: string): ScheduleEntry => ({ kind: 'cron', expression, ...(timezone !== undefined ? { timezone } : {}) });
const between = (expression: string, from: string, to: string, zone: string): string[] => iso(dueTimes(cron(expression), new Date(from), new Date(to), zone));

// 2026-03-08: New York jumps from 02:00 EST (07:00Z) to 03:00 EDT; 02:00-02:59 local does not exist.
describe('spring forward (America/New_York, 2026-03-08)', () => {
  const zone = 'America/New_York';
  const day = (expression: string): string[] => between(expression, '2026-03-08T04:00:00Z', '2026-03-09T04:00:00Z', zone);

  test('a fixed-time job in the skipped hour runs once at the first instant after the gap (03:00 EDT)', () => {
    assert.deepEqual(iso(nextRunTimes(cron('30 2 * * *'), new Date('2026-03-07T12:00:00Z'), 3, zone)), ['2026-03-08T07:00Z', '2026-03-09T06:30Z', '2026-03-10T06:30Z']);
    assert.deepEqual(day('0 2 * * *'), ['2026-03-08T07:00Z']);
    assert.deepEqual(day('59 2 * * *'), ['2026-03-08T07:00Z']);
  });

  test('gap times collapse into one run, shared with a run due at 03:00 itself', () => {
    assert.deepEqual(day('0 2,3 * * *'), ['2026-03-08T07:00Z']);
    assert.deepEqual(day('0 1-3 * * *'), ['2026-03-08T06:00Z', '2026-03-08T07:00Z']);
  });

  test('a fixed hour with a minute step is a fixed-time job: once after the gap', () => {
    assert.deepEqual(day('*/15 2 * * *'), ['2026-03-08T07:00Z']);
    assert.deepEqual(between('*/15 2 * * *', '2026-03-09T04:00:00Z', '2026-03-10T04:00:00Z', zone), ['2026-03-09T06:00Z', '2026-03-09T06:15Z', '2026-03-09T06:30Z', '2026-03-09T06:45Z']);
  });

  test('interval jobs follow real time: the missing times are skipped, nothing runs twice', () => {
    // 00:30 EST, 01:30 EST, then 03:30 EDT: one run per real hour.
    assert.deepEqual(between('30 * * * *', '2026-03-08T05:00:00Z', '2026-03-08T09:00:00Z', zone), ['2026-03-08T05:30Z', '2026-03-08T06:30Z', '2026-03-08T07:30Z', '2026-03-08T08:30Z']);
    const quarter = between('*/15 * * * *', '2026-03-08T06:00:00Z', '2026-03-08T08:00:00Z', zone);
    assert.equal(quarter.length, 8); // two real hours, every 15 minutes: 01:15 EST ... 01:45 EST, 03:00 EDT ... 04:00 EDT
    assert.deepEqual(quarter.slice(2, 4), ['2026-03-08T06:45Z', '2026-03-08T07:00Z']);
    // A two-hour step keeps its wall-clock slots: 00:00 EST, then 04:00 EDT, three real hours later.
    assert.deepEqual(between('0 */2 * * *', '2026-03-08T04:30:00Z', '2026-03-08T09:00:00Z', zone), ['2026-03-08T05:00Z', '2026-03-08T08:00Z']);
  });
});

// 2026-11-01: New York falls back from 02:00 EDT (06:00Z) to 01:00 EST; 01:00-01:59 local happens twice.
describe('fall back (America/New_York, 2026-11-01)', () => {
  const zone = 'America/New_York';
  const day = (expression: string): string[] => between(expression, '2026-11-01T04:00:00Z', '2026-11-02T05:00:00Z', zone);

  test('a fixed-time job in the repeated hour runs once, at the first occurrence (EDT)', () => {
    assert.deepEqual(iso(nextRunTimes(cron('30 1 * * *'), new Date('2026-10-31T12:00:00Z'), 2, zone)), ['2026-11-01T05:30Z', '2026-11-02T06:30Z']);
    // Asked from inside the second pass (01:10 EST), the job is not due again that day.
    assert.deepEqual(iso(nextRunTimes(cron('30 1 * * *'), new Date('2026-11-01T06:10:00Z'), 1, zone)), ['2026-11-02T06:30Z']);
  });

  test('fixed hours with lists, ranges and minute steps keep their daily count', () => {
    assert.deepEqual(day('30 1,13 * * *'), ['2026-11-01T05:30Z', '2026-11-01T18:30Z']);
    assert.deepEqual(day('0 1-3 * * *'), ['2026-11-01T05:00Z', '2026-11-01T07:00Z', '2026-11-01T08:00Z']);
    assert.deepEqual(day('*/15 1 * * *'), ['2026-11-01T05:00Z', '2026-11-01T05:15Z', '2026-11-01T05:30Z', '2026-11-01T05:45Z']);
  });

  test('interval jobs run on both occurrences of the repeated hour: one run per real interval', () => {
    // 00:30 EDT, 01:30 EDT, 01:30 EST, 02:30 EST.
    assert.deepEqual(between('30 * * * *', '2026-11-01T04:00:00Z', '2026-11-01T08:00:00Z', zone), ['2026-11-01T04:30Z', '2026-11-01T05:30Z', '2026-11-01T06:30Z', '2026-11-01T07:30Z']);
    assert.equal(between('*/15 * * * *', '2026-11-01T05:00:00Z', '2026-11-01T07:00:00Z', zone).length, 8);
    // 00:00 EDT, then 02:00 EST, three real hours later; 02:00 is not repeated, so it runs once.
    assert.deepEqual(between('0 */2 * * *', '2026-11-01T03:30:00Z', '2026-11-01T08:00:00Z', zone), ['2026-11-01T04:00Z', '2026-11-01T07:00Z']);
  });
});

describe('Europe/Berlin, 2026', () => {
  const zone = 'Europe/Berlin';

  test('spring forward (03-29, 02:00 CET -> 03:00 CEST): 02:15 runs at 03:00 CEST', () => {
    assert.deepEqual(iso(nextRunTimes(cron('15 2 * * *'), new Date('2026-03-28T12:00:00Z'), 2, zone)), ['2026-03-29T01:00Z', '2026-03-30T00:15Z']);
    assert.deepEqual(between('30 * * * *', '2026-03-29T00:00:00Z', '2026-03-29T02:00:00Z', zone), ['2026-03-29T00:30Z', '2026-03-29T01:30Z']);
  });

  test('fall back (10-25, 03:00 CEST -> 02:00 CET): 02:30 runs once in CEST; hourly runs twice', () => {
    assert.deepEqual(between('30 2 * * *', '2026-10-24T22:00:00Z', '2026-10-25T22:00:00Z', zone), ['2026-10-25T00:30Z']);
    assert.deepEqual(between('30 * * * *', '2026-10-25T00:00:00Z', '2026-10-25T02:00:00Z', zone), ['2026-10-25T00:30Z', '2026-10-25T01:30Z']);
  });

  test('an ordinary summer weekday schedule', () => {
    assert.deepEqual(iso(nextRunTimes(cron('0 9 * * 1-5'), new Date('2026-07-03T12:00:00Z'), 2, zone)), ['2026-07-06T07:00Z', '2026-07-07T07:00Z']);
  });
});

describe('zones', () => {
  test('CRON_TZ on the entry overrides the configured default zone', () => {
    assert.deepEqual(iso(nextRunTimes(cron('0 9 * * *', 'Asia/Tokyo'), new Date('2026-06-01T00:00:00Z'), 1, 'America/New_York')), ['2026-06-02T00:00Z']);
    assert.deepEqual(iso(nextRunTimes(cron('0 9 * * *'), new Date('2026-06-01T00:00:00Z'), 1, 'America/New_York')), ['2026-06-01T13:00Z']);
  });

  test('a UTC entry ignores the default zone daylight saving', () => {
    assert.deepEqual(between('30 2 * * *', '2026-03-08T00:00:00Z', '2026-03-09T00:00:00Z', 'UTC'), ['2026-03-08T02:30Z']);
    assert.deepEqual(iso(dueTimes(cron('30 2 * * *', 'UTC'), new Date('2026-03-08T00:00:00Z'), new Date('2026-03-09T00:00:00Z'), 'America/New_York')), ['2026-03-08T02:30Z']);
  });
});
