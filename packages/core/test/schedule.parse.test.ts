import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseScheduleField } from '@trellis/core';

describe('schedule field forms', () => {
  test('aliases become canonical five-field cron; whitespace is normalised', () => {
    const { value, errors } = parseScheduleField(['@daily', '@hourly', '@weekly', '@monthly', '@yearly', '@annually', '@midnight', ' */5   *  * * * '], 'schedule');
    assert.deepEqual(errors, []);
    assert.deepEqual(
      value.start.map((e) => (e.kind === 'cron' ? e.expression : e.at)),
      ['0 0 * * *', '0 * * * *', '0 0 * * 0', '0 0 1 * *', '0 0 1 1 *', '0 0 1 1 *', '0 0 * * *', '*/5 * * * *'],
    );
  });

  test('start/stop/restart object with profiles and one-off entries', () => {
    const { value, errors } = parseScheduleField(
      { start: [{ expression: '0 8 * * *', profile: 'prod' }, { kind: 'at', at: '2026-12-24T18:00:00-05:00' }], stop: '0 18 * * *', restart: ['@daily'] },
      'schedule',
    );
    assert.deepEqual(errors, []);
    assert.deepEqual(value, {
      start: [
        { kind: 'cron', expression: '0 8 * * *', profile: 'prod' },
        { kind: 'at', at: '2026-12-24T23:00:00.000Z' },
      ],
      stop: [{ kind: 'cron', expression: '0 18 * * *' }],
      restart: [{ kind: 'cron', expression: '0 0 * * *' }],
    });
  });

  test('every bad entry is reported with its path', () => {
    const { errors } = parseScheduleField(
      { start: ['0 0 * * * *', '@sometimes', 'CRON_TZ=Mars/Base 0 1 * * *', { kind: 'at', at: '2026-12-24 18:00' }, 42, { profile: 'x' }], stop: 'bogus', weekly: 1 },
      'schedule',
    );
    assert.deepEqual(errors, [
      'schedule.weekly: unknown field (expected start, stop or restart)',
      'schedule.start[0]: invalid cron expression "0 0 * * * *" (expected 5 fields: minute hour day-of-month month day-of-week, got 6)',
      'schedule.start[1]: unknown schedule alias "@sometimes"',
      'schedule.start[2]: unknown time zone "Mars/Base" in CRON_TZ',
      'schedule.start[3].at: must be an RFC 3339 timestamp with an offset or Z, got "2026-12-24 18:00"',
      'schedule.start[4]: must be a cron string or a schedule entry, got a number',
      'schedule.start[5]: needs `expression` (a cron string) or `kind: at` with `at`',
      'schedule.stop: invalid cron expression "bogus" (expected 5 fields: minute hour day-of-month month day-of-week, got 1)',
    ]);
  });

  test('out-of-range fields are invalid', () => {
    const { errors } = parseScheduleField('61 * * * *', 'schedule');
    assert.equal(errors.length, 1);
    assert.match(errors[0] ?? '', /^schedule: invalid cron expression "61 \* \* \* \*"/);
  });
});
