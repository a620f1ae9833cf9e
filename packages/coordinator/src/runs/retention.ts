import { rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { dagsWithRunsBefore, purgeHistory, type Db } from '@trellis/store';
import type { Logger } from '../logging/logger.js';
import { toError } from '../errors/normalize.js';

/** The sweep runs this often; retention is counted in days, so hourly is plenty. */
const SWEEP_MS = 60 * 60 * 1000;
const DAY_MS = 86_400_000;

export interface RetentionDeps {
  db: Db;
  logger: Logger;
  /** hist_retention_days of a DAG by name; the configured default for names no file defines. */
  retentionDays: (dagName: string) => number;
  now?: () => Date;
}

/** Removes old finished runs and their log directories (per attempt), DAG by DAG. */
export async function purgeOldRuns(deps: RetentionDeps): Promise<number> {
  const now = (deps.now ?? (() => new Date()))();
  // The shortest retention is one day: nothing younger can be due.
  let removed = 0;
  for (const dagName of await dagsWithRunsBefore(deps.db, new Date(now.getTime() - DAY_MS))) {
    const logFiles = await purgeHistory(deps.db, dagName, deps.retentionDays(dagName), now);
    for (const file of logFiles) await rm(dirname(file), { recursive: true, force: true });
    removed += logFiles.length;
  }
  if (removed > 0) deps.logger.info('history retention removed old runs', { runs: removed });
  return removed;
}

export function startRetention(deps: RetentionDeps): () => void {
  const sweep = (): void => {
    purgeOldRuns(deps).catch((error: unknown) => deps.logger.warn('history retention failed; retrying in an hour', { error: toError(error) }));
  };
  sweep();
  const timer = setInterval(sweep, SWEEP_MS);
  timer.unref();
  return () => clearInterval(timer);
}
