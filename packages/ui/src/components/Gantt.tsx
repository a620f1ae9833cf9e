import type { Schemas } from '../api/client';
import { nodeStatusWord, toneOf } from '../lib/status';
import { duration, parseTime } from '../lib/time';

/** Each step as a bar from its start to its end (or now, while it runs), on the run's time axis. */
export function Gantt({ nodes, now }: { nodes: Schemas['Node'][]; now: number }) {
  const spans = nodes
    .map((n) => ({ node: n, start: parseTime(n.startedAt)?.getTime(), end: parseTime(n.finishedAt)?.getTime() ?? (n.status === 1 ? now : undefined) }))
    .filter((s): s is { node: Schemas['Node']; start: number; end: number | undefined } => s.start !== undefined);
  if (spans.length === 0) return <p className="muted">No step has started yet.</p>;
  const t0 = Math.min(...spans.map((s) => s.start));
  const t1 = Math.max(...spans.map((s) => s.end ?? s.start), t0 + 1);
  const total = t1 - t0;
  return (
    <ol className="gantt" aria-label="Timeline of steps">
      {spans.map(({ node, start, end }) => {
        const word = nodeStatusWord(node.status);
        const left = ((start - t0) / total) * 100;
        const width = Math.max((((end ?? start) - start) / total) * 100, 0.5);
        return (
          <li key={node.step.name}>
            <span className="gantt-label">{node.step.name}</span>
            <span className="gantt-track">
              <span className={`gantt-bar tone-${toneOf(word)}`} style={{ left: `${left}%`, width: `${width}%` }} title={`${node.step.name}: ${word}, ${duration((end ?? start) - start)}`} />
            </span>
            <span className="small muted">{duration((end ?? start) - start)}</span>
          </li>
        );
      })}
    </ol>
  );
}
