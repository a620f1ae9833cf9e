// Times formatted without Intl: relative words in English, absolute times in the local zone as
// `YYYY-MM-DD hh:mm:ss`, and the zone's offset from UTC.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { absoluteTime, duration, relativeTime, utcOffset } from '../src/lib/time.js';

const NOW = Date.UTC(2026, 10, 26, 12, 0, 0);
const at = (seconds: number) => new Date(NOW + seconds * 1000);

describe('relativeTime', () => {
  test('past and future in the largest whole unit, singular and plural', () => {
    assert.equal(relativeTime(at(-1), NOW), '1 second ago');
    assert.equal(relativeTime(at(-45), NOW), '45 seconds ago');
    assert.equal(relativeTime(at(90), NOW), 'in 2 minutes');
    assert.equal(relativeTime(at(-3 * 3600), NOW), '3 hours ago');
    assert.equal(relativeTime(at(-40 * 86400), NOW), '1 month ago');
    assert.equal(relativeTime(at(2 * 365 * 86400), NOW), 'in 2 years');
  });

  test('one day either way and no time at all have their words', () => {
    assert.equal(relativeTime(at(-86400), NOW), 'yesterday');
    assert.equal(relativeTime(at(30 * 3600), NOW), 'tomorrow');
    assert.equal(relativeTime(at(0), NOW), 'now');
    assert.equal(relativeTime(new Date(NOW + 400), NOW), 'now');
  });
});

/** Runs `body` with the process in time zone `zone` (Node applies a change of TZ at once). */
function inZone(zone: string, body: () => void): void {
  const before = process.env.TZ;
  process.env.TZ = zone;
  try {
    body();
  } finally {
    if (before === undefined) delete process.env.TZ;
    else process.env.TZ = before;
  }
}

describe('absoluteTime and utcOffset', () => {
  test('the local wall-clock time, zero-padded and sortable', () => {
    const date = new Date(2026, 0, 5, 7, 8, 9);
    assert.equal(absoluteTime(date), '2026-01-05 07:08:09');
    inZone('Asia/Kolkata', () => assert.equal(absoluteTime(new Date(Date.UTC(2026, 10, 26, 19, 40, 5))), '2026-11-27 01:10:05'));
  });

  test('the offset from UTC is the local zone’s at that date, half hours and summer time included', () => {
    inZone('UTC', () => assert.equal(utcOffset(new Date(Date.UTC(2026, 6, 1))), 'UTC+00:00'));
    inZone('Asia/Kolkata', () => assert.equal(utcOffset(new Date(Date.UTC(2026, 6, 1))), 'UTC+05:30'));
    inZone('America/St_Johns', () => {
      assert.equal(utcOffset(new Date(Date.UTC(2026, 0, 15))), 'UTC-03:30');
      assert.equal(utcOffset(new Date(Date.UTC(2026, 6, 15))), 'UTC-02:30');
    });
    inZone('Europe/Berlin', () => assert.equal(utcOffset(new Date(Date.UTC(2026, 6, 15))), 'UTC+02:00'));
  });
});

describe('duration', () => {
  test('milliseconds, seconds, minutes and hours', () => {
    assert.equal(duration(320), '320 ms');
    assert.equal(duration(5_000), '5s');
    assert.equal(duration(65_000), '1m 05s');
    assert.equal(duration(3_720_000), '1h 02m');
  });
});
