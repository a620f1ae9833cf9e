import type { StepPayload, Task } from '@trellis/core';

const TERMINAL = new Set([2, 3, 4, 6, 8]);

/** A worker's status snapshot of `task` with one step, as JSON for a Report event. */
export function snapshotJson(task: Task, run: { status: number; step: string; nodeStatus?: number; stdout: string; stderr?: string }): string {
  const now = new Date().toISOString();
  const finishedAt = TERMINAL.has(run.status) ? now : '';
  // The whole step payload a worker's engine sends: the API serves it as the contract's Node.
  const step: StepPayload = {
    name: run.step, id: '', description: '', type: 'shell', dir: '', command: 'true', args: [], script: '', run: '', params: '',
    stdout: '', stderr: '', output: '', depends: [], preconditions: [], repeat_policy: { repeat: false, interval: 0 }, mail_on_error: false,
  };
  const node = {
    step, stdout: run.stdout, stderr: run.stderr ?? `${run.step}.err`, startedAt: now, finishedAt, status: run.nodeStatus ?? run.status,
    statusLabel: '', retryCount: 0, doneCount: 0, subRuns: [], subRunsRepeated: [], error: '',
  };
  return JSON.stringify({
    ...task.ref, rootDagRunName: task.rootDagRunName, rootDagRunId: task.rootDagRunId, parentDagRunName: '', parentDagRunId: '',
    status: run.status, statusLabel: '', startedAt: now, finishedAt, log: 'run.log', params: task.paramsJson, error: '', nodes: [node], handlers: {}, waitingSteps: [],
  });
}
