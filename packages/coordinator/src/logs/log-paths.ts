import { resolve } from 'node:path';
import { confinedPath, nameSegment, type Dag } from '@trellis/core';

/**
 * Where a DAG's run logs go: its `log_dir`, or the system log directory when it sets none. A
 * relative `log_dir` lies under the system log directory: the coordinator writes these files,
 * and its working directory says nothing about where a DAG's author meant them to go.
 */
export function dagLogRoot(systemLogDir: string, dag: Pick<Dag, 'logDir'>): string {
  return dag.logDir === undefined || dag.logDir === '' ? systemLogDir : resolve(systemLogDir, dag.logDir);
}

/**
 * `<logDir>/<dag>/<run id>.<attempt number>/run.log`: each attempt keeps its own logs. One
 * folder per attempt rather than `<run id>/<attempt>`: a directory costs 0.2-0.3 ms to create on
 * a busy ext4 disk, and removing an attempt's folder then leaves nothing behind. The attempt
 * number follows the last dot, so two runs never share a folder.
 */
export function runLogFile(logDir: string, dagName: string, dagRunId: string, attemptNumber: number): string {
  return confinedPath(logDir, nameSegment(dagName), `${nameSegment(dagRunId)}.${attemptNumber}`, 'run.log');
}
