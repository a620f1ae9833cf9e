import { isTerminalRunStatus, NotFoundError } from '@trellis/core';
import { getDagRunStates, getLatestRun, getNodes, getOutputs, listRunSummaries, listRunSummaryJson, listRuns, RunSummaryCache, syncedSpecCommit, type DagRunState, type Db, type LogStreamRef, type NodeRow, type RunFilter, type RunRecord } from '@trellis/store';
import { EMPTY_LOG_PAGE, readEndedTail, readLogPage, type LogPage, type LogWindow } from '../logs/log-pager.js';
import { logStreamOf } from '../logs/log-streams.js';
import type { LogFileImport } from '../logs/log-file-import.js';
import type { ListPage } from '../http/page-cache.js';
import { runDetails, runSummary } from './payloads.js';
import type { RunService } from './run-service.js';

export interface RunQueriesDeps {
  db: Db;
  runs: RunService;
  /** Logs of runs from before logs were stored in the database, imported from this coordinator's disk on first read. */
  logFiles: Pick<LogFileImport, 'ensure'>;
}

/** A run list's filter: every field narrows it; `cursor` continues a previous page. */
/** The run list's filter is the store's: the edge imports it from here, not from the store. */
export type RunListFilter = RunFilter;

/** What the outputs of a run that stored none read as: the contract's empty outputs document. */
/** Ended runs' logs remembered by where they are stored; the oldest forgotten first. */
const MAX_ENDED_LOGS = 10_000;

const NO_OUTPUTS = { metadata: { dagName: '', dagRunId: '', attemptId: '', status: '', completedAt: '0001-01-01T00:00:00Z', params: '' }, outputs: {} };

/** A run's log, or a step's (or handler's) stdout or stderr. */
export interface LogTarget {
  step?: string;
  stream: 'stdout' | 'stderr';
}

export const RUN_LOG: LogTarget = { stream: 'stdout' };

interface NodeLogs {
  step?: { name?: string };
  stdout?: string;
  stderr?: string;
}

/** Reading runs: by id (or `latest`), in pages, with their nodes, outputs and logs; answers in the contract's forms. */
export class RunQueries {
  /**
   * Where the logs of ended runs are stored, by run and log: a tail of one (what a page showing
   * a finished step asks for again and again) is then one round trip instead of three (run,
   * nodes, log). The tail's statement checks that the run is still ended on that attempt.
   */
  private readonly endedLogs = new Map<string, LogStreamRef>();
  /** Run summaries as lists show them, shared by the run list and the DAG list's newest runs. */
  private readonly summaries = new RunSummaryCache();

  constructor(private readonly deps: RunQueriesDeps) {}

  /** A run by its DAG name and id; `latest` is the DAG's newest run. */
  async resolve(name: string, dagRunId: string): Promise<RunRecord> {
    if (dagRunId !== 'latest') return this.deps.runs.require(name, dagRunId);
    const run = await getLatestRun(this.deps.db, name);
    if (run === undefined) throw new NotFoundError('DAG run not found', { name, dagRunId });
    return run;
  }

  /**
   * Runs, newest first, with the cursor of the next page when there is one: the response body
   * as JSON text, written on demand, its summaries as the database wrote them (see
   * RUN_SUMMARY_JSON), and what it is made of.
   */
  async list(filter: RunListFilter): Promise<ListPage> {
    // A cursor this store did not hand out is its InvalidCursorError: a bad request already.
    const { summaries, nextCursor } = await listRunSummaryJson(this.deps.db, this.summaries, filter);
    return {
      parts: [nextCursor, ...summaries],
      text: () => `{"dagRuns":[${summaries.join(',')}]${nextCursor !== undefined ? `,"nextCursor":${JSON.stringify(nextCursor)}` : ''}}`,
    };
  }

  /** Each named DAG's newest run (as JSON text) and whether it is suspended: what the DAG list shows of its runs. */
  dagRunStates(dagNames: string[]): Promise<Map<string, DagRunState>> {
    return getDagRunStates(this.deps.db, this.summaries, dagNames);
  }

  /** The recent runs of a DAG and, per step it names, the step's status in each of them (the history grid). */
  async history(dagName: string, stepNames: string[], limit: number) {
    const { runs } = await listRunSummaries(this.deps.db, { name: dagName, limit });
    const nodesByRun = await Promise.all(runs.map((r) => getNodes(this.deps.db, r.id)));
    const gridData = stepNames.map((name) => ({
      name,
      history: nodesByRun.map((nodes) => (stepOf(nodes, name)?.data as { status?: number } | undefined)?.status ?? 0),
    }));
    return { dagRuns: runs.map((r) => runSummary(r)), gridData };
  }

  /** A run with its nodes (`latest` allowed); a queued one with why it waits. */
  async details(name: string, dagRunId: string) {
    return this.detailsOf(await this.resolve(name, dagRunId));
  }

  async detailsOf(run: RunRecord) {
    return runDetails(run, await getNodes(this.deps.db, run.id), await this.deps.runs.conditionsFor(run), (await syncedSpecCommit(this.deps.db, run.specHash)) ?? '');
  }

  /** The collected outputs of a run; the empty document when it stored none. */
  async outputs(name: string, dagRunId: string) {
    const run = await this.resolve(name, dagRunId);
    return (await getOutputs(this.deps.db, run.id)) ?? NO_OUTPUTS;
  }

  log(name: string, dagRunId: string, window: LogWindow): Promise<LogPage> {
    return this.logPage(name, dagRunId, RUN_LOG, window);
  }

  /** A page of a step's (or handler's) stdout or stderr. */
  stepLog(name: string, dagRunId: string, stepName: string, stream: 'stdout' | 'stderr', window: LogWindow): Promise<LogPage> {
    return this.logPage(name, dagRunId, { step: stepName, stream }, window);
  }

  private async logPage(name: string, dagRunId: string, log: LogTarget, window: LogWindow): Promise<LogPage> {
    // `latest` names another run after the next start: never remembered.
    const key = dagRunId === 'latest' ? undefined : [name, dagRunId, log.step ?? '', log.stream].join('\u0000');
    const known = key === undefined ? undefined : this.endedLogs.get(key);
    if (known !== undefined && window.kind === 'tail') {
      const page = await readEndedTail(this.deps.db, known, window.lines);
      if (page !== undefined) return page;
      this.endedLogs.delete(key as string);
    }
    const run = await this.resolve(name, dagRunId);
    const ref = await this.logStream(run, log);
    const page = await this.page(ref, window);
    if (key !== undefined && ref !== undefined && isTerminalRunStatus(run.status) && page.totalLines > 0) this.rememberEnded(key, ref);
    return page;
  }

  private rememberEnded(key: string, ref: LogStreamRef): void {
    if (this.endedLogs.size >= MAX_ENDED_LOGS) this.endedLogs.delete(this.endedLogs.keys().next().value as string);
    this.endedLogs.set(key, ref);
  }

  /** Where a log of the run's current attempt is stored; undefined while it has none (a node without output). */
  async logStream(run: RunRecord, log: LogTarget): Promise<LogStreamRef | undefined> {
    const ref = log.step === undefined ? logStreamOf(run, run.logFile) : await this.nodeLogStream(run, log.step, log.stream);
    if (ref !== undefined) await this.deps.logFiles.ensure(run, ref);
    return ref;
  }

  private async nodeLogStream(run: RunRecord, step: string, stream: LogTarget['stream']): Promise<LogStreamRef | undefined> {
    const data = await this.loggedNode(run, step);
    return logStreamOf(run, stream === 'stderr' ? data.stderr : data.stdout);
  }

  /** A page of a stored log; a node without a log of this attempt's has an empty one. */
  private page(ref: LogStreamRef | undefined, window: LogWindow): Promise<LogPage> {
    return ref === undefined ? Promise.resolve(EMPTY_LOG_PAGE) : readLogPage(this.deps.db, ref, window);
  }

  /** A sub-DAG run (at any depth) of the run `name`/`dagRunId`, by its own id. */
  async subRun(name: string, dagRunId: string, subDagRunId: string): Promise<RunRecord> {
    const root = await this.resolve(name, dagRunId);
    const { runs } = await listRuns(this.deps.db, { dagRunId: subDagRunId, limit: 10 });
    const child = runs.find((r) => r.rootDagRunId === root.rootDagRunId && r.id !== root.id);
    if (child === undefined) throw new NotFoundError('sub-DAG run not found', { subDagRunId });
    return child;
  }

  /** A step node of a run. */
  async step(run: RunRecord, stepName: string): Promise<NodeRow> {
    const node = stepOf(await getNodes(this.deps.db, run.id), stepName);
    if (node === undefined) throw new NotFoundError(`step ${stepName} not found in this run`, { stepName });
    return node;
  }

  async hasStep(run: RunRecord, stepName: string): Promise<boolean> {
    return stepOf(await getNodes(this.deps.db, run.id), stepName) !== undefined;
  }

  /** A step, or a handler by the step name the DAG detail gives it (`onSuccess`, `onExit`, or its own `name`). */
  private async loggedNode(run: RunRecord, stepName: string): Promise<NodeLogs> {
    const nodes = await getNodes(this.deps.db, run.id);
    const node = stepOf(nodes, stepName) ?? nodes.find((n) => n.kind === 'handler' && (n.data as NodeLogs).step?.name === stepName);
    if (node === undefined) throw new NotFoundError(`step ${stepName} not found in this run`, { stepName });
    return node.data as NodeLogs;
  }
}

function stepOf(nodes: NodeRow[], stepName: string): NodeRow | undefined {
  return nodes.find((n) => n.kind === 'step' && n.stepName === stepName);
}
