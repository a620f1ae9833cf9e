/**
 * Schedules: the `schedule:` field, and when its entries run. The daylight-saving policy is
 * documented at the top of ./cron.ts.
 */
export { canonicalCron, isValidTimeZone } from './cron.js';
export { parseScheduleField } from './parse.js';
export { MAX_DUE_TIMES, dueTimes, nextRunTimes, nextStartRun, previousRunTime } from './next-runs.js';
export { scheduleEntryPayload } from './payload.js';
