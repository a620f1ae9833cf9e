import { useId, useMemo } from 'react';
import type { Schemas } from '../api/client';
import { layeredLayout, type Layout } from '../lib/layered-layout';
import { nodeStatusWord, toneOf } from '../lib/status';

const NODE_W = 180;
const NODE_H = 44;

/** Dependencies as edges (a chain DAG's steps come with `depends` on the step before, filled in by the parser). */
function edgesOf(steps: Schemas['Step'][]): Array<[string, string]> {
  return steps.flatMap((step) => step.depends.map((d): [string, string] => [d, step.name]));
}

function layout(steps: Schemas['Step'][]): Layout {
  return layeredLayout(
    steps.map((s) => s.name),
    edgesOf(steps),
    { nodeWidth: NODE_W, nodeHeight: NODE_H, rankGap: 48, nodeGap: 18, margin: 8 },
  );
}

/** The steps laid out left to right in layers, each coloured by its status in `nodes` when given. */
export function Graph({ steps, nodes, onSelect }: { steps: Schemas['Step'][]; nodes?: Schemas['Node'][]; onSelect?: (step: string) => void }) {
  // Laid out again only when the graph's shape changes, not on every status poll.
  const shape = JSON.stringify(steps.map((s) => [s.name, s.depends]));
  const laid = useMemo(() => layout(steps), [shape]);
  const idPrefix = useId();
  const statusOf = new Map((nodes ?? []).map((n) => [n.step.name, n.status]));
  return (
    <div className="graph-wrap">
      <svg className="graph" width={laid.width} height={laid.height} viewBox={`0 0 ${laid.width} ${laid.height}`} role="group" aria-label="Step graph">
        <defs>
          <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M 0 0 L 10 5 L 0 10 z" className="edge-head" />
          </marker>
        </defs>
        {laid.edges.map((e) => (
          <polyline key={`${e.from}->${e.to}`} className="edge" points={e.points.map((p) => `${p.x},${p.y}`).join(' ')} markerEnd="url(#arrow)" />
        ))}
        {laid.nodes.map((n, i) => {
          const status = statusOf.get(n.name);
          const word = status !== undefined ? nodeStatusWord(status) : 'not started';
          const shown = n.name.length > 22 ? `${n.name.slice(0, 21)}…` : n.name;
          return (
            <g
              key={n.name}
              transform={`translate(${n.x - NODE_W / 2},${n.y - NODE_H / 2})`}
              className={`node tone-${toneOf(word)}`}
              data-step={n.name}
              data-status={word}
              role={onSelect !== undefined ? 'button' : 'img'}
              tabIndex={onSelect !== undefined ? 0 : undefined}
              aria-labelledby={`${idPrefix}-${i}`}
              onClick={() => onSelect?.(n.name)}
              onKeyDown={(e) => {
                if (e.key === 'Enter' || e.key === ' ') {
                  e.preventDefault();
                  onSelect?.(n.name);
                }
              }}
            >
              <rect width={NODE_W} height={NODE_H} rx="6" />
              <text id={`${idPrefix}-${i}`}>
                <tspan x="10" y="18" className="node-name">
                  {shown}
                </tspan>
                <tspan x="10" y="34" className="node-status">
                  {` ${word}`}
                </tspan>
              </text>
            </g>
          );
        })}
      </svg>
    </div>
  );
}
