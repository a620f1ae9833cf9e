import { execFileSync } from 'node:child_process';

/** PIDs of live processes whose command line contains `marker` (pgrep -f). */
export function processesMatching(marker: string): number[] {
  try {
    return execFileSync('pgrep', ['-f', marker], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

/** A number no other test uses, for `sleep <n>` markers. */
export function uniqueSleep(): number {
  return 900_000 + Math.floor(Math.random() * 90_000);
}
