import { rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { dagsWithRunsBefore, purgeHistory, type Db } from '@trellis/store';
import { toError } from '@trellis/core';
import type { Logger } from '../logging/logger.js';

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

/**
 * The log folders of a run whose latest attempt logs to `logFile`: `<run id>.1` up to
 * `<run id>.<n>` (see runLogFile); a folder of another layout is removed alone.
 */
function attemptFolders(logFile: string): string[] {
  const latest = dirname(logFile);
  const match = /^(.+)\.(\d+)$/.exec(basename(latest));
  if (match === null) return [latest];
  const [, stem = '', last = '1'] = match;
  return Array.from({ length: Number(last) }, (_, i) => join(dirname(latest), `${stem}.${i + 1}`));
}

/**
 * Removes old finished runs, DAG by DAG: their stored logs go with them (run_log_chunks cascade
 * from runs), and this coordinator's local log folders of all their attempts, when it has them.
 */
export async function purgeOldRuns(deps: RetentionDeps): Promise<number> {
  const now = (deps.now ?? (() => new Date()))();
  // The shortest retention is one day: nothing younger can be due.
  let removed = 0;
  for (const dagName of await dagsWithRunsBefore(deps.db, new Date(now.getTime() - DAY_MS))) {
    const logFiles = await purgeHistory(deps.db, dagName, deps.retentionDays(dagName), now);
    for (const folder of logFiles.flatMap(attemptFolders)) await rm(folder, { recursive: true, force: true });
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
