import { z } from 'zod';

/**
 * Instants a request may name: years 0001-9999, the range of RFC 3339. Inside it both a
 * JavaScript Date (beyond +-8.64e15 ms it is an Invalid Date whose toISOString throws) and a
 * PostgreSQL timestamptz (no years before 4713 BC or after 294276) hold the value.
 */
const EARLIEST_SECONDS = -62_135_596_800; // 0001-01-01T00:00:00Z
const LATEST_SECONDS = 253_402_300_799; // 9999-12-31T23:59:59Z
const RANGE = 'must be between 0001-01-01 and 9999-12-31';

/** A query parameter in Unix seconds (`fromDate`, `toDate`). */
export const unixSecondsQuery = z.coerce
  .number()
  .int()
  .min(EARLIEST_SECONDS, `${RANGE} (Unix seconds ${EARLIEST_SECONDS} to ${LATEST_SECONDS})`)
  .max(LATEST_SECONDS, `${RANGE} (Unix seconds ${EARLIEST_SECONDS} to ${LATEST_SECONDS})`);

/** A query parameter holding an RFC 3339 timestamp (`startTime`, `endTime`), as a Date. */
export const instantQuery = z
  .string()
  .refine((text) => !Number.isNaN(Date.parse(text)), 'must be an RFC 3339 timestamp')
  .transform((text) => new Date(text))
  .refine((date) => date.getTime() >= EARLIEST_SECONDS * 1000 && date.getTime() <= LATEST_SECONDS * 1000 + 999, RANGE);
