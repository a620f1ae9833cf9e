import type { NodeEvent } from '../api/events';

interface LiveNode {
  step: { name: string };
  status: number;
  statusLabel: string;
  startedAt: string;
  finishedAt: string;
  retryCount: number;
  doneCount: number;
  error: string;
}

/**
 * The run's steps with the step changes of its stream applied, in order (the stream sends each
 * change once, oldest first). Changes of another run, of a lifecycle handler, or of a step the
 * run does not list leave the nodes as they are: the run's own reload brings those.
 */
export function applyNodeEvents<N extends LiveNode>(dagRunId: string, nodes: N[], events: NodeEvent[]): N[] {
  const mine = events.filter((e) => e.dagRunId === dagRunId && !e.handler && e.status !== undefined);
  if (mine.length === 0) return nodes;
  const latest = new Map<string, NodeEvent>();
  for (const event of mine) latest.set(event.stepName, event);
  return nodes.map((node) => {
    const event = latest.get(node.step.name);
    if (event?.status === undefined) return node;
    return {
      ...node,
      status: event.status,
      statusLabel: event.statusLabel,
      startedAt: event.startedAt,
      finishedAt: event.finishedAt,
      retryCount: event.retryCount,
      doneCount: event.doneCount,
      error: event.error,
    };
  });
}
