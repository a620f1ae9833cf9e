import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalCron, parseScheduleField, scheduleEntryPayload } from '@trellis/core';

const expressions = (raw: unknown): string[] =>
  parseScheduleField(raw, 'schedule').value.start.map((e) => (e.kind === 'cron' ? e.expression : e.at));

describe('schedule field forms', () => {
  test('aliases become canonical five-field cron, case-insensitively; whitespace is normalised', () => {
    const { value, errors } = parseScheduleField(['@daily', '@hourly', '@weekly', '@monthly', '@yearly', '@annually', '@midnight', '@DAILY', ' */5   *  * * * ', '0\t9 * * MON-FRI'], 'schedule');
    assert.deepEqual(errors, []);
    assert.deepEqual(
      value.start.map((e) => (e.kind === 'cron' ? e.expression : e.at)),
      ['0 0 * * *', '0 * * * *', '0 0 * * 0', '0 0 1 * *', '0 0 1 1 *', '0 0 1 1 *', '0 0 * * *', '0 0 * * *', '*/5 * * * *', '0 9 * * MON-FRI'],
    );
  });

  test('a single string, a single entry object, and null/absent', () => {
    assert.deepEqual(parseScheduleField('0 8 * * *', 'schedule'), { value: { start: [{ kind: 'cron', expression: '0 8 * * *' }], stop: [], restart: [] }, errors: [] });
    assert.deepEqual(parseScheduleField({ cron: '@hourly', profile: 'prod' }, 'schedule').value.start, [{ kind: 'cron', expression: '0 * * * *', profile: 'prod' }]);
    assert.deepEqual(parseScheduleField(undefined, 'schedule'), { value: { start: [], stop: [], restart: [] }, errors: [] });
    assert.deepEqual(parseScheduleField(null, 'schedule'), { value: { start: [], stop: [], restart: [] }, errors: [] });
    assert.deepEqual(parseScheduleField([], 'schedule').errors, []);
  });

  test('start/stop/restart object with profiles, `cron:` and `kind:` spellings, one-off entries', () => {
    const { value, errors } = parseScheduleField(
      {
        start: [{ expression: '0 8 * * *', profile: 'prod' }, { kind: 'at', at: '2026-12-24T18:00:00-05:00' }, { at: '2026-12-25T00:00:00Z', profile: 'eu-1.b_c' }],
        stop: '0 18 * * *',
        restart: [{ kind: 'cron', cron: '@daily' }],
      },
      'schedule',
    );
    assert.deepEqual(errors, []);
    assert.deepEqual(value, {
      start: [
        { kind: 'cron', expression: '0 8 * * *', profile: 'prod' },
        { kind: 'at', at: '2026-12-24T23:00:00.000Z' },
        { kind: 'at', at: '2026-12-25T00:00:00.000Z', profile: 'eu-1.b_c' },
      ],
      stop: [{ kind: 'cron', expression: '0 18 * * *' }],
      restart: [{ kind: 'cron', expression: '0 0 * * *' }],
    });
  });

  test('CRON_TZ prefixes become the entry zone, also before an alias', () => {
    const { value, errors } = parseScheduleField(['CRON_TZ=Europe/Berlin 0 9 * * *', 'CRON_TZ=Asia/Tokyo   @daily'], 'schedule');
    assert.deepEqual(errors, []);
    assert.deepEqual(value.start, [
      { kind: 'cron', expression: '0 9 * * *', timezone: 'Europe/Berlin' },
      { kind: 'cron', expression: '0 0 * * *', timezone: 'Asia/Tokyo' },
    ]);
    assert.deepEqual(value.start.map(scheduleEntryPayload), [{ expression: 'CRON_TZ=Europe/Berlin 0 9 * * *' }, { expression: 'CRON_TZ=Asia/Tokyo 0 0 * * *' }]);
  });

  test('one-off timestamps: offsets, fractions, a space or lower-case separator, optional seconds, Date values', () => {
    const at = (text: unknown): string[] => expressions([{ kind: 'at', at: text }]);
    assert.deepEqual(at('2026-06-01T10:00:00+02:00'), ['2026-06-01T08:00:00.000Z']);
    assert.deepEqual(at('2026-06-01 10:00:00.5Z'), ['2026-06-01T10:00:00.500Z']);
    assert.deepEqual(at('2026-06-01t10:00z'), ['2026-06-01T10:00:00.000Z']);
    assert.deepEqual(at('2026-06-01T10:00:00-0330'), ['2026-06-01T13:30:00.000Z']);
    assert.deepEqual(at('2028-02-29T00:00:00Z'), ['2028-02-29T00:00:00.000Z']);
    assert.deepEqual(at(new Date('2026-06-01T10:00:00Z')), ['2026-06-01T10:00:00.000Z']);
    assert.deepEqual(scheduleEntryPayload({ kind: 'at', at: '2026-06-01T10:00:00.000Z' }), { kind: 'at', at: '2026-06-01T10:00:00.000Z' });
  });

  test('impossible or offset-less timestamps are rejected, not rolled over', () => {
    for (const text of ['2026-02-30T00:00:00Z', '2027-02-29T00:00:00Z', '2026-06-01T24:00:00Z', '2026-06-01T10:60:00Z', '2026-13-01T00:00:00Z', '2026-06-01T10:00:00', 'tomorrow', '']) {
      const { errors } = parseScheduleField([{ kind: 'at', at: text }], 'schedule');
      assert.deepEqual(errors, [`schedule[0].at: must be an RFC 3339 timestamp with an offset or Z, got ${JSON.stringify(text)}`], text);
    }
  });

  test('every bad entry is reported with its path', () => {
    const { errors } = parseScheduleField(
      {
        start: ['0 0 * * * *', '@sometimes', 'CRON_TZ=Mars/Base 0 1 * * *', { kind: 'at', at: '2026-12-24 18:00' }, 42, { profile: 'x' }, { kind: 'weekly' }, { expression: '@daily', cron: '@daily' }, { expression: '@daily', profile: 'Prod' }, ['0 0 * * *']],
        stop: 'bogus',
        weekly: 1,
      },
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
      'schedule.start[6].kind: must be "at" or "cron", got "weekly"',
      'schedule.start[7]: has both `expression` and `cron`; use one',
      'schedule.start[8].profile: must be a profile name (lowercase letters, digits, ".", "_", "-")',
      'schedule.start[9]: must be a cron string or a schedule entry, got an array',
      'schedule.stop: invalid cron expression "bogus" (expected 5 fields: minute hour day-of-month month day-of-week, got 1)',
    ]);
  });

  test('out-of-range fields, non-standard steps, never-matching dates and empty strings are invalid', () => {
    const cases: Array<[string, RegExp]> = [
      ['61 * * * *', /^schedule: invalid cron expression "61 \* \* \* \*" \(.+\)$/],
      ['0 24 * * *', /^schedule: invalid cron expression "0 24 \* \* \*" \(.*hour.*\)$/],
      ['5/15 * * * *', /^schedule: invalid cron expression "5\/15 \* \* \* \*" \(.+\)$/],
      ['0 0 30 2 *', /^schedule: invalid cron expression "0 0 30 2 \*" \(it never matches a date\)$/],
      ['   ', /^schedule: empty cron expression$/],
      ['CRON_TZ=UTC', /^schedule: empty cron expression$/],
      ['CRON_TZ= 0 0 * * *', /^schedule: unknown time zone "" in CRON_TZ$/],
    ];
    for (const [text, pattern] of cases) {
      const { errors, value } = parseScheduleField(text, 'schedule');
      assert.equal(errors.length, 1, text);
      assert.match(errors[0] ?? '', pattern);
      assert.deepEqual(value.start, []);
    }
  });

  test('canonicalCron keeps croner extensions it can schedule (names, L, #)', () => {
    assert.deepEqual(canonicalCron('0 12 L * *'), { expression: '0 12 L * *' });
    assert.deepEqual(canonicalCron('0 12 * JAN,jul FRI#L'), { expression: '0 12 * JAN,jul FRI#L' });
  });

  test('never throws, whatever the input', () => {
    let seed = 7;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const atoms: unknown[] = [null, undefined, 0, -1, 1.5, true, '', '@', '*', '* * * * *', 'CRON_TZ=', '0 0 * * * * *', '\u0000', new Date(Number.NaN), { kind: 'at' }, { at: 5 }, Symbol('s')];
    const build = (depth: number): unknown => {
      const pick = random();
      if (depth > 2 || pick < 0.4) return atoms[Math.floor(random() * atoms.length)];
      if (pick < 0.7) return Array.from({ length: Math.floor(random() * 4) }, () => build(depth + 1));
      const keys = ['start', 'stop', 'restart', 'kind', 'at', 'expression', 'cron', 'profile', 'x'];
      return Object.fromEntries(Array.from({ length: Math.floor(random() * 4) }, () => [keys[Math.floor(random() * keys.length)], build(depth + 1)]));
    };
    for (let i = 0; i < 500; i += 1) {
      const raw = build(0);
      const { value, errors } = parseScheduleField(raw, 'schedule');
      assert.ok(Array.isArray(value.start) && Array.isArray(errors));
      for (const error of errors) assert.match(error, /^schedule/);
    }
  });
});
