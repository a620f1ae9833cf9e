import type { ContinueOn, RepeatPolicy, RetryPolicy } from '@trellis/core';
import { matchesExpected } from './conditions.js';

/** interval * backoff^attempt, capped by max_interval_sec; in milliseconds. */
export function backoffDelayMs(policy: RetryPolicy | RepeatPolicy, attempt: number): number {
  const seconds = policy.intervalSec * Math.pow(policy.backoff, attempt);
  const capped = policy.maxIntervalSec !== undefined ? Math.min(seconds, policy.maxIntervalSec) : seconds;
  return Math.max(0, Math.round(capped * 1000));
}

export function shouldRetry(policy: RetryPolicy | undefined, retriesSoFar: number, exitCode: number): boolean {
  if (policy === undefined || retriesSoFar >= policy.limit) return false;
  return policy.exitCode.length === 0 || policy.exitCode.includes(exitCode);
}

/** Whether a failed step's continue_on lets its dependents run. */
export function continueCovers(continueOn: ContinueOn, exitCode: number, output: string): boolean {
  if (continueOn.failure) return true;
  if (continueOn.exitCode.includes(exitCode)) return true;
  return continueOn.output.some((pattern) => (pattern.startsWith('re:') ? matchesExpected(output, pattern) : output.includes(pattern)));
}

export function repeatLimitReached(policy: RepeatPolicy, done: number): boolean {
  return policy.limit !== undefined && done >= policy.limit;
}
