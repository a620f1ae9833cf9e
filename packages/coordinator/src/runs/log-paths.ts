import { join } from 'node:path';

const safe = (name: string): string => name.replace(/[^A-Za-z0-9_.-]/g, '_');

/** `<logDir>/<dag>/<run id>/<attempt number>/run.log`: each attempt keeps its own logs. */
export function runLogFile(logDir: string, dagName: string, dagRunId: string, attemptNumber: number): string {
  return join(logDir, safe(dagName), safe(dagRunId), String(attemptNumber), 'run.log');
}
