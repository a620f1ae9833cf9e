import type { Schemas } from '../api/client';
import type { NodeEvent } from '../api/events';

/** What a node event changes in a run's node, named by the API's own Node so the two cannot drift apart. */
type LiveNode = Pick<Schemas['Node'], 'status' | 'statusLabel' | 'startedAt' | 'finishedAt' | 'retryCount' | 'doneCount' | 'error'> & {
  step: Pick<Schemas['Step'], 'name'>;
};

/** The step changes of this run's own steps (lifecycle handlers and other runs left out). */
function stepChangesOf(dagRunId: string, events: NodeEvent[]): NodeEvent[] {
  return events.filter((e) => e.dagRunId === dagRunId && !e.handler && e.status !== undefined);
}

/**
 * Whether a step change of this run names a step the loaded run does not list: the run was read
 * before its host first reported its steps (a reporter holds a run's first report for up to
 * 150 ms to write it with the rest of its burst), so the page must read the run again rather
 * than drop the change, or it would show no step moving until the run's own status changes.
 */
export function listsTooFewSteps(dagRunId: string, nodes: ReadonlyArray<{ step: { name: string } }>, events: NodeEvent[]): boolean {
  const listed = new Set(nodes.map((n) => n.step.name));
  return stepChangesOf(dagRunId, events).some((e) => !listed.has(e.stepName));
}

/**
 * The run's steps with the step changes of its stream applied, in order (the stream sends each
 * change once, oldest first). Changes of another run, of a lifecycle handler, or of a step the
 * run does not list leave the nodes as they are: the run's own reload brings those.
 */
export function applyNodeEvents<N extends LiveNode>(dagRunId: string, nodes: N[], events: NodeEvent[]): N[] {
  const mine = stepChangesOf(dagRunId, events);
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
