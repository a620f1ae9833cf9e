import { dirname, isAbsolute, join, resolve } from 'node:path';
import { relativeUnder } from '@trellis/core';
import type { NodeSnapshot, RunSnapshot } from '@trellis/engine';
import type { LogStreamRef, RunRecord } from '@trellis/store';

/*
 * A run's logs live in the database (run_log_chunks), one stream a file of the attempt's log
 * folder, named by its path relative to that folder (`run.log`, `<step>.<n>.out`, ...): the name
 * a worker sends its chunks under, and the same on every coordinator, whatever its disk holds.
 * The run record's `logFile` and the nodes' stdout/stderr keep the paths the contract shows.
 */

/** The folder of an attempt's log files, which stream names are relative to. */
export function attemptLogDir(run: Pick<RunRecord, 'logFile'>): string {
  return dirname(resolve(run.logFile));
}

/** A path relative to the attempt's log folder, placed under it; undefined if it would escape. */
function placeInside(runDir: string, relative: string): string | undefined {
  if (relative === '' || isAbsolute(relative)) return undefined;
  const target = join(runDir, relative);
  return relativeUnder(runDir, target) !== undefined ? target : undefined;
}

function placeNode(runDir: string, node: NodeSnapshot): NodeSnapshot {
  return { ...node, stdout: placeInside(runDir, node.stdout) ?? '', stderr: placeInside(runDir, node.stderr) ?? '' };
}

/** The worker's snapshot with its log paths (relative to its attempt folder) named under the run's log folder. */
export function placeSnapshot(runDir: string, snapshot: RunSnapshot): RunSnapshot {
  return {
    ...snapshot,
    log: placeInside(runDir, snapshot.log) ?? '',
    nodes: snapshot.nodes.map((n) => placeNode(runDir, n)),
    handlers: Object.fromEntries(Object.entries(snapshot.handlers).map(([k, n]) => [k, placeNode(runDir, n)])),
  };
}

/** The stream a worker's chunk belongs to, normalised; undefined for a name outside the attempt's folder. */
export function workerStreamName(runDir: string, relative: string): string | undefined {
  const placed = placeInside(runDir, relative);
  return placed === undefined ? undefined : relativeUnder(runDir, placed);
}

/**
 * The stored stream of a log file of the run's current attempt (the run log, or a node's
 * stdout/stderr); undefined for a path outside the attempt's folder (a DAG's log_dir holds other
 * runs' logs too).
 */
export function logStreamOf(run: Pick<RunRecord, 'id' | 'attemptId' | 'logFile'>, path: string | undefined): LogStreamRef | undefined {
  if (path === undefined || path === '') return undefined;
  const stream = relativeUnder(attemptLogDir(run), resolve(path));
  return stream === undefined ? undefined : { runId: run.id, attemptId: run.attemptId, stream };
}
