import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_DUE_TIMES, dueTimes, nextRunTimes, nextStartRun, parseScheduleField, type ScheduleEntry } from '@trellis/core';

const iso = (dates: Date[]): string[] => dates.map((d) => d.toISOString());
const cron = (expression: string, timezone?: string): ScheduleEntry => ({ kind: 'cron', expression, ...(timezone !== undefined ? { timezone } : {}) });
const at = (time: string): ScheduleEntry => ({ kind: 'at', at: new Date(time).toISOString() });

describe('next run times', () => {
  test('strictly after `after`, as many as asked', () => {
    const runs = nextRunTimes(cron('0 * * * *'), new Date('2026-06-01T10:00:00Z'), 3, 'UTC');
    assert.deepEqual(iso(runs), ['2026-06-01T11:00:00.000Z', '2026-06-01T12:00:00.000Z', '2026-06-01T13:00:00.000Z']);
    assert.deepEqual(nextRunTimes(cron('0 * * * *'), new Date('2026-06-01T10:00:00Z'), 0, 'UTC'), []);
  });

  test('a one-off yields its time once, only when it is later than `after`', () => {
    const once = at('2026-06-01T10:00:00Z');
    assert.deepEqual(iso(nextRunTimes(once, new Date('2026-06-01T09:59:59Z'), 5)), ['2026-06-01T10:00:00.000Z']);
    assert.deepEqual(nextRunTimes(once, new Date('2026-06-01T10:00:00Z'), 5), []);
    assert.deepEqual(nextRunTimes(once, new Date('2026-06-01T09:00:00Z'), 0), []);
  });

  test('nextStartRun: the earliest start entry; stop and restart entries and past one-offs are ignored', () => {
    const { value } = parseScheduleField(
      { start: ['0 12 * * *', { kind: 'at', at: '2026-06-01T10:00:00+02:00' }, { kind: 'at', at: '2020-01-01T00:00:00Z' }], stop: ['*/5 * * * *'], restart: ['* * * * *'] },
      'schedule',
    );
    assert.equal(nextStartRun(value, new Date('2026-06-01T00:00:00Z'), 'UTC')?.toISOString(), '2026-06-01T08:00:00.000Z');
    assert.equal(nextStartRun(value, new Date('2026-06-01T09:00:00Z'), 'UTC')?.toISOString(), '2026-06-01T12:00:00.000Z');
    assert.equal(nextStartRun({ start: [], stop: [], restart: [] }, new Date()), undefined);
    assert.equal(nextStartRun({ start: [at('2020-01-01T00:00:00Z')], stop: [], restart: [] }, new Date('2026-01-01T00:00:00Z')), undefined);
  });
});

describe('due times for a ticking scheduler', () => {
  test('the window is (after, until]: a run on the upper edge is due, one on the lower edge is not', () => {
    const hourly = cron('0 * * * *');
    assert.deepEqual(iso(dueTimes(hourly, new Date('2026-06-01T09:59:00Z'), new Date('2026-06-01T10:00:00Z'), 'UTC')), ['2026-06-01T10:00:00.000Z']);
    assert.deepEqual(dueTimes(hourly, new Date('2026-06-01T10:00:00Z'), new Date('2026-06-01T10:01:00Z'), 'UTC'), []);
    assert.deepEqual(dueTimes(hourly, new Date('2026-06-01T10:00:00Z'), new Date('2026-06-01T09:00:00Z'), 'UTC'), []);
  });

  test('a one-off with seconds is due in the minute window that contains it', () => {
    const once = at('2026-06-01T10:00:30Z');
    assert.deepEqual(dueTimes(once, new Date('2026-06-01T09:59:00Z'), new Date('2026-06-01T10:00:00Z')), []);
    assert.deepEqual(iso(dueTimes(once, new Date('2026-06-01T10:00:00Z'), new Date('2026-06-01T10:01:00Z'))), ['2026-06-01T10:00:30.000Z']);
  });

  test('a long catch-up window is bounded', () => {
    const runs = dueTimes(cron('* * * * *'), new Date('2026-01-01T00:00:00Z'), new Date('2026-02-01T00:00:00Z'), 'UTC');
    assert.equal(runs.length, MAX_DUE_TIMES);
    assert.equal(runs[0]?.toISOString(), '2026-01-01T00:01:00.000Z');
  });

  // The scheduler asks only about (lastTick, thisTick], with no memory of earlier answers. Across
  // every DST transition, ticking minute by minute (and late, uneven ticks) must give exactly the
  // runs that one query over the whole span gives: no run lost or repeated at a window edge.
  const transitions: Array<[string, string, string]> = [
    ['America/New_York', '2026-03-08T04:00:00Z', '2026-03-08T10:00:00Z'],
    ['America/New_York', '2026-11-01T03:00:00Z', '2026-11-01T09:00:00Z'],
    ['Europe/Berlin', '2026-03-28T23:00:00Z', '2026-03-29T04:00:00Z'],
    ['Europe/Berlin', '2026-10-24T23:00:00Z', '2026-10-25T04:00:00Z'],
  ];
  const patterns = ['30 2 * * *', '30 1 * * *', '*/15 1,2 * * *', '0 1-3 * * *', '*/20 * * * *', '30 * * * *', '0 */2 * * *'];
  for (const [zone, from, to] of transitions) {
    test(`minute ticks through ${zone} ${from.slice(0, 10)} match one query over the span`, () => {
      const start = new Date(from).getTime();
      const end = new Date(to).getTime();
      for (const pattern of patterns) {
        const entry = cron(pattern);
        const whole = iso(dueTimes(entry, new Date(start), new Date(end), zone));
        for (const step of [60_000, 7 * 60_000 + 1_250]) {
          const ticked: Date[] = [];
          for (let t = start; t < end; t += step) ticked.push(...dueTimes(entry, new Date(t), new Date(Math.min(t + step, end)), zone));
          assert.deepEqual(iso(ticked), whole, `${pattern} with ticks of ${step} ms`);
        }
        assert.deepEqual(whole, iso(nextRunTimes(entry, new Date(start), whole.length + 5, zone)).slice(0, whole.length), pattern);
      }
    });
  }
});
