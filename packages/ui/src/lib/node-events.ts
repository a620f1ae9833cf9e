import type { Schemas } from '../api/client';
import type { NodeEvent } from '../api/events';
import { isOwnStepChange } from './unlisted-steps';

/** What a node event changes in a run's node, named by the API's own Node so the two cannot drift apart. */
type LiveNode = Pick<Schemas['Node'], 'status' | 'statusLabel' | 'startedAt' | 'finishedAt' | 'retryCount' | 'doneCount' | 'error'> & {
  step: Pick<Schemas['Step'], 'name'>;
};

/**
 * The run's steps with the step changes of its stream applied, in order (the stream sends each
 * change once, oldest first). Changes of another run, of a lifecycle handler, or of a step the
 * run does not list leave the nodes as they are: the run's own reload brings those.
 */
export function applyNodeEvents<N extends LiveNode>(dagRunId: string, nodes: N[], events: NodeEvent[]): N[] {
  const mine = events.filter((e) => isOwnStepChange(dagRunId, e));
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
