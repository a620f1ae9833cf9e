import { RunStatus, runStatusLabel, startSubRunRequest, taskIdentity, toError, type ResolvedParams, type Task } from '@trellis/core';
import { queuedSubRun, runDag, type ProcessLauncher, type RunHandle, type SubRunHandle, type SubRunLauncher, type SubRunRequest } from '@trellis/engine';
import { isCoordinatorAway, type CoordinatorClient } from '../grpc/client.js';
import type { Logger } from '../logging.js';
import { ReportBuffer } from '../reporting/report-buffer.js';
import { Backoff, sleep } from '../reporting/backoff.js';
import type { DagCache } from './dag-cache.js';
import type { AttemptFolders } from './attempt-dir.js';
import { SlotLoan } from './slot-loan.js';

const WAIT_RUN_MS = 20_000;

export interface TaskContext {
  client: CoordinatorClient;
  workerId: string;
  folders: AttemptFolders;
  logger: Logger;
  dags: DagCache;
  launcher: ProcessLauncher;
  /** Lends this run's slot to another poller (see SlotLoan); returns the end of the loan. */
  lendSlot: () => () => void;
}

/** One attempt running here: what heartbeats report and cancellations stop. */
export interface RunningAttempt {
  task: Task;
  startedAt: string;
  handle?: RunHandle;
  stop(): void;
  /** The engine finished: the slot is free, though reports may still be on their way. */
  ended: Promise<void>;
  /** Everything is over: the coordinator holds every report and the files are gone. */
  done: Promise<void>;
}

/** Retries a call while the coordinator is unreachable; a refusal it answers with is returned as thrown. */
async function persistently<T>(fn: () => Promise<T>, giveUp: () => boolean): Promise<T> {
  const backoff = new Backoff();
  for (;;) {
    try {
      return await fn();
    } catch (error) {
      if (!isCoordinatorAway(error) || giveUp()) throw error;
      await sleep(backoff.next());
    }
  }
}

/**
 * Sub-DAG steps run as child runs the coordinator queues and places (by the step's
 * worker_selector). Stopping the parent stops the child through the coordinator, wherever it
 * runs; the child's end then ends the wait. The waits tell the parent's SlotLoan when its slot
 * may be lent.
 */
function remoteSubRuns(ctx: TaskContext, task: Task, isStopping: () => boolean, loan: SlotLoan): SubRunLauncher {
  return (request: SubRunRequest): SubRunHandle =>
    queuedSubRun(request, {
      enqueue: async () => {
        const message = startSubRunRequest(
          { workerId: ctx.workerId, ref: task.ref, rootDagRunName: task.rootDagRunName, rootDagRunId: task.rootDagRunId, specYaml: task.specYaml },
          { ...request, fromParentFile: request.localDag !== undefined },
        );
        await persistently(() => ctx.client.request('StartSubRun', message), isStopping);
      },
      waitForEnd: async () => {
        loan.waitBegins();
        try {
          for (;;) {
            const answer = await persistently(() => ctx.client.request('WaitRun', { dagName: request.dagName, dagRunId: request.dagRunId, waitMs: WAIT_RUN_MS }, WAIT_RUN_MS + 10_000), isStopping);
            if (answer.finished) {
              return { status: answer.status as RunStatus, outputs: JSON.parse(answer.outputsJson || '{}') as Record<string, string>, ...(answer.error !== '' ? { error: answer.error } : {}) };
            }
          }
        } finally {
          loan.waitEnds();
        }
      },
      // Not waited for: the child's end, which the wait reports, is what counts.
      stop: () => {
        void ctx.client
          .request('StopSubRun', { workerId: ctx.workerId, parent: task.ref, dagName: request.dagName, dagRunId: request.dagRunId })
          .catch((error: unknown) => ctx.logger.warn('could not stop a sub-DAG run', { dagRunId: request.dagRunId, error: toError(error).message }));
      },
    });
}

/**
 * Runs one acknowledged task with the engine and streams its reports. Its folder (logs and
 * work directory) is emptied for reuse once the coordinator holds every report.
 */
export function startAttempt(ctx: TaskContext, task: Task, isStopping: () => boolean): RunningAttempt {
  const attemptDir = ctx.folders.take();
  const log = ctx.logger.child({ dagName: task.ref.dagName, dagRunId: task.ref.dagRunId, attemptId: task.ref.attemptId });
  const attempt: RunningAttempt = { task, startedAt: new Date().toISOString(), stop: () => attempt.handle?.stop(), ended: Promise.resolve(), done: Promise.resolve() };
  const reports = new ReportBuffer(ctx.client, ctx.workerId, task.ref, attemptDir, log, () => attempt.stop());
  const picked = ctx.dags.select(task.specYaml, task.fileName || task.ref.dagName, task.ref.dagName);
  const params = parseParams(task.paramsJson);
  const problem = picked.dag === undefined ? (picked.error ?? 'no DAG to run') : params === undefined ? 'the task params are not a JSON array of {name, value}' : undefined;
  if (picked.dag === undefined || params === undefined || problem !== undefined) {
    log.error('task cannot start', { error: problem });
    attempt.done = failUnstarted(reports, task, problem ?? 'the task cannot start');
    attempt.ended = attempt.done;
    return attempt;
  }
  const loan = new SlotLoan(ctx.lendSlot);
  const handle = runDag({
    dag: picked.dag,
    localDags: picked.localDags,
    params,
    identity: taskIdentity(task),
    logDir: attemptDir,
    env: task.env,
    secrets: task.secrets,
    dotenvFiles: task.dotenvFiles,
    maskValues: task.maskValues,
    reporter: {
      onStatus: (snapshot) => {
        loan.observe(snapshot);
        reports.onStatus(snapshot);
      },
      onLog: (chunk) => reports.onLog(chunk),
      onOutputs: (outputs) => reports.onOutputs(outputs),
    },
    launchSubRun: remoteSubRuns(ctx, task, isStopping, loan),
    launcher: ctx.launcher,
  });
  attempt.handle = handle;
  log.debug('run started');
  attempt.ended = handle.done.then(
    (result) => log.info('run finished', { status: result.snapshot.statusLabel }),
    (error: unknown) => log.error('run crashed in the engine', { error }),
  ).then(() => undefined);
  attempt.done = attempt.ended
    .then(() => reports.settled())
    .finally(() => ctx.folders.release(attemptDir));
  return attempt;
}

function parseParams(json: string): ResolvedParams | undefined {
  try {
    const value: unknown = JSON.parse(json);
    return Array.isArray(value) ? (value as ResolvedParams) : undefined;
  } catch {
    return undefined;
  }
}

/** A task that cannot even start still ends, Failed with the reason, through the normal report path. */
async function failUnstarted(reports: ReportBuffer, task: Task, error: string): Promise<void> {
  const now = new Date().toISOString();
  reports.onStatus({
    ...taskIdentity(task),
    status: RunStatus.Failed,
    statusLabel: runStatusLabel(RunStatus.Failed),
    startedAt: now,
    finishedAt: now,
    log: '',
    params: task.paramsJson,
    error,
    nodes: [],
    handlers: {},
    waitingSteps: [],
  });
  await reports.settled();
}
