import { mkdir, open } from 'node:fs/promises';
import { dirname, isAbsolute, join, normalize, sep } from 'node:path';
import { isTerminalRunStatus, type LogChunkMessage, type ReportEvent, type RunStatus, type TaskRef } from '@trellis/core';
import type { NodeSnapshot, RunOutputs, RunSnapshot } from '@trellis/engine';
import { advanceReportSeq, getRun, saveOutputs, type Db, type RunRecord } from '@trellis/store';
import { persistSnapshot } from '../runs/snapshot-store.js';
import type { RunObserver } from '../runs/run-observer.js';

export interface ReportOutcome {
  appliedSeq: number;
  stale: boolean;
  /** The run reached a terminal status with this batch: its queue slot is free. */
  finished: boolean;
}

/** A worker path relative to the attempt's log directory, placed under the coordinator's; undefined if it would escape. */
function placeInside(runDir: string, relative: string): string | undefined {
  if (relative === '' || isAbsolute(relative)) return undefined;
  const target = normalize(join(runDir, relative));
  return target.startsWith(runDir + sep) ? target : undefined;
}

function placeNode(runDir: string, node: NodeSnapshot): NodeSnapshot {
  return { ...node, stdout: placeInside(runDir, node.stdout) ?? '', stderr: placeInside(runDir, node.stderr) ?? '' };
}

/** The worker's snapshot with its log paths moved under this coordinator's log directory for the run. */
function placeSnapshot(runDir: string, snapshot: RunSnapshot): RunSnapshot {
  return {
    ...snapshot,
    log: placeInside(runDir, snapshot.log) ?? '',
    nodes: snapshot.nodes.map((n) => placeNode(runDir, n)),
    handlers: Object.fromEntries(Object.entries(snapshot.handlers).map(([k, n]) => [k, placeNode(runDir, n)])),
  };
}

/** Writes a chunk at its byte offset: a resent chunk rewrites the same bytes, never appends them twice. */
async function writeChunk(runDir: string, chunk: LogChunkMessage): Promise<void> {
  const path = placeInside(runDir, chunk.stream);
  if (path === undefined) return;
  await mkdir(dirname(path), { recursive: true });
  const file = await open(path, 'r+').catch(() => open(path, 'w'));
  try {
    await file.write(chunk.data, 0, chunk.data.length, chunk.offset);
  } finally {
    await file.close();
  }
}

/**
 * Applies a worker's reports for one attempt, in sequence order, skipping what was already
 * applied. Reports from any attempt but the current one, or from another worker, are stale.
 * Reports of one attempt are applied one batch at a time.
 */
export class ReportApplier {
  private readonly chains = new Map<string, Promise<unknown>>();

  constructor(
    private readonly db: Db,
    private readonly observer: RunObserver,
  ) {}

  apply(workerId: string, ref: TaskRef, events: ReportEvent[]): Promise<ReportOutcome> {
    const key = `${ref.dagName}\u0000${ref.dagRunId}`;
    const previous = this.chains.get(key) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(() => this.applyNow(workerId, ref, events));
    this.chains.set(key, next);
    void next.finally(() => {
      if (this.chains.get(key) === next) this.chains.delete(key);
    }).catch(() => undefined);
    return next;
  }

  private async applyNow(workerId: string, ref: TaskRef, events: ReportEvent[]): Promise<ReportOutcome> {
    const run = await getRun(this.db, ref.dagName, ref.dagRunId);
    if (run === undefined || run.attemptId !== ref.attemptId || run.workerId !== workerId) return { appliedSeq: 0, stale: true, finished: false };
    let applied = run.reportSeq;
    let finished = false;
    for (const event of [...events].sort((a, b) => a.seq - b.seq)) {
      if (event.seq <= applied) continue;
      const ended = await this.applyEvent(run, event);
      if (ended !== undefined) {
        finished = true;
        this.observer.finished(run.dagName, ended, run.startedAt);
      }
      applied = event.seq;
    }
    if (applied > run.reportSeq && !(await advanceReportSeq(this.db, run.id, run.attemptId, applied))) return { appliedSeq: 0, stale: true, finished: false };
    return { appliedSeq: applied, stale: false, finished };
  }

  /** Applies one event; the terminal status when it moved the run to one. */
  private async applyEvent(run: RunRecord, event: ReportEvent): Promise<RunStatus | undefined> {
    const runDir = dirname(run.logFile);
    if (event.body === 'log' && event.log != null) {
      await writeChunk(runDir, event.log);
    } else if (event.body === 'statusJson' && event.statusJson !== undefined) {
      const snapshot = JSON.parse(event.statusJson) as RunSnapshot;
      // The fence is the attempt the report was sent for, whatever the body claims.
      const moved = await persistSnapshot(this.db, run.id, { ...placeSnapshot(runDir, snapshot), attemptId: run.attemptId });
      return moved && isTerminalRunStatus(snapshot.status) ? snapshot.status : undefined;
    } else if (event.body === 'outputsJson' && event.outputsJson !== undefined) {
      const outputs = JSON.parse(event.outputsJson) as RunOutputs;
      await saveOutputs(this.db, run.id, outputs.metadata, outputs.outputs);
    }
    return undefined;
  }
}
