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

describe('absoluteTime and utcOffset', () => {
  test('the local wall-clock time, zero-padded and sortable', () => {
    const date = new Date(2026, 0, 5, 7, 8, 9);
    assert.equal(absoluteTime(date), '2026-01-05 07:08:09');
  });

  test('the offset from UTC is the local zone’s at that date', () => {
    const date = new Date(2026, 6, 1);
    const minutes = -date.getTimezoneOffset();
    const expected = `UTC${minutes < 0 ? '-' : '+'}${String(Math.floor(Math.abs(minutes) / 60)).padStart(2, '0')}:${String(Math.abs(minutes) % 60).padStart(2, '0')}`;
    assert.equal(utcOffset(date), expected);
    assert.match(utcOffset(date), /^UTC[+-]\d{2}:\d{2}$/);
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
