import type { Schemas } from '../api/client';
import { nodeStatusWord, toneOf } from '../lib/status';
import { duration, parseTime } from '../lib/time';
import { useWindowedRows } from './windowed-rows';

/** One bar's row (the styles fix it) and the height of the box the rows scroll in. */
const ROW_HEIGHT = 22;
const VIEW_HEIGHT = 440;

/** Each step as a bar from its start to its end (or now, while it runs), on the run's time axis. */
export function Gantt({ nodes, now }: { nodes: Schemas['Node'][]; now: number }) {
  const spans = nodes
    .map((n) => ({ node: n, start: parseTime(n.startedAt)?.getTime(), end: parseTime(n.finishedAt)?.getTime() ?? (n.status === 1 ? now : undefined) }))
    .filter((s): s is { node: Schemas['Node']; start: number; end: number | undefined } => s.start !== undefined);
  const rows = useWindowedRows<HTMLDivElement>(spans.length, ROW_HEIGHT, VIEW_HEIGHT);
  if (spans.length === 0) return <p className="muted">No step has started yet.</p>;
  const t0 = Math.min(...spans.map((s) => s.start));
  const t1 = Math.max(...spans.map((s) => s.end ?? s.start), t0 + 1);
  const total = t1 - t0;
  return (
    // Focusable: the box scrolls, and its bars hold nothing else a keyboard could reach.
    <div ref={rows.scroller} className="gantt-scroll" tabIndex={0} role="region" aria-label="Timeline" style={{ maxHeight: VIEW_HEIGHT }}>
      <ol className="gantt" aria-label="Timeline of steps" style={{ paddingTop: rows.before, paddingBottom: rows.after }}>
        {rows.indexes.map((index) => {
          const { node, start, end } = spans[index] as (typeof spans)[number];
          const word = nodeStatusWord(node.status);
          const left = ((start - t0) / total) * 100;
          const width = Math.max((((end ?? start) - start) / total) * 100, 0.5);
          return (
            <li key={node.step.name} ref={rows.measure} data-index={index} aria-setsize={spans.length} aria-posinset={index + 1}>
              <span className="gantt-label">{node.step.name}</span>
              <span className="gantt-track">
                <span className={`gantt-bar tone-${toneOf(word)}`} style={{ left: `${left}%`, width: `${width}%` }} title={`${node.step.name}: ${word}, ${duration((end ?? start) - start)}`} />
              </span>
              <span className="small muted">{duration((end ?? start) - start)}</span>
            </li>
          );
        })}
      </ol>
    </div>
  );
}
