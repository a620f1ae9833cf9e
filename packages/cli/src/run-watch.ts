import { isTerminalRunStatus, RunStatus } from '@trellis/core/protocol';
import type { ApiClient } from './api-client.js';

/** The fields of a run payload the client commands print. */
export interface RunView {
  name: string;
  dagRunId: string;
  status: RunStatus;
  statusLabel: string;
  startedAt?: string;
  finishedAt?: string;
  error?: string;
  nodes?: Array<{ step: { name: string }; statusLabel: string; error: string }>;
  conditions?: Array<{ reason: string; message: string }>;
}

export function runPath(dag: string, id: string): string {
  return `/dag-runs/${encodeURIComponent(dag)}/${encodeURIComponent(id)}`;
}

export async function getRun(client: ApiClient, dag: string, id: string): Promise<RunView> {
  return (await client.get(runPath(dag, id))).dagRun as RunView;
}

/** A run with its steps, and why it waits while it is queued. */
export function describeRun(run: RunView): string {
  const lines = [`${run.name} ${run.dagRunId}: ${run.statusLabel}${run.error !== undefined && run.error !== '' ? ` (${run.error})` : ''}`];
  for (const node of run.nodes ?? []) lines.push(`  ${node.step.name}: ${node.statusLabel}${node.error !== '' ? ` (${node.error})` : ''}`);
  for (const condition of run.conditions ?? []) lines.push(`  waiting: ${condition.reason}: ${condition.message}`);
  return lines.join('\n');
}

/** The exit code a finished run gives a command that waited for it. */
export function runExitCode(run: RunView): number {
  return run.status === RunStatus.Success || run.status === RunStatus.PartialSuccess ? 0 : 1;
}

export const RUN_EXIT_CODES = `Exit status: 0 when the run succeeded (or partially succeeded: the steps that failed
were allowed to), 1 when it failed, was aborted or rejected, or the coordinator refused
the request, 2 for a usage error.`;

/**
 * Follows a run until it ends, calling `show` each time it changes. The run's server-sent event
 * stream says when to look; the stream is opened before the first look, so a change between the
 * two is not lost. Without a stream (it closed, or the coordinator has none) it polls.
 */
export async function watchRun(client: ApiClient, dag: string, id: string, show: (run: RunView) => void, pollMs: number): Promise<RunView> {
  const abort = new AbortController();
  let printed = '';
  const look = async (): Promise<RunView> => {
    const run = await getRun(client, dag, id);
    const text = describeRun(run);
    if (text !== printed) show(run);
    printed = text;
    return run;
  };
  try {
    const events = await client.events(`/events/dag-runs/${encodeURIComponent(dag)}/${encodeURIComponent(id)}`, abort.signal).catch(() => undefined);
    let run = await look();
    if (isTerminalRunStatus(run.status)) return run;
    if (events !== undefined) {
      try {
        for await (const event of events) {
          if (event.event !== 'run') continue;
          run = await look();
          if (isTerminalRunStatus(run.status)) return run;
        }
      } catch {
        // The stream broke (the coordinator restarted, a proxy cut it): polling takes over.
      }
    }
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, pollMs));
      run = await look();
      if (isTerminalRunStatus(run.status)) return run;
    }
  } finally {
    abort.abort();
  }
}
