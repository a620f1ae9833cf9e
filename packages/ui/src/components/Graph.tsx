import { useId, useMemo } from 'react';
import dagre from '@dagrejs/dagre';
import type { Schemas } from '../api/client';
import { nodeStatusWord, toneOf } from '../lib/status';

/**
 * Above this many steps the crossing-reduction passes are skipped: on a 200-step graph they
 * cost several hundred milliseconds of a first render; the order from a depth-first walk stays.
 */
const ORDERING_LIMIT = 100;
const NODE_W = 180;
const NODE_H = 44;

interface Layout {
  width: number;
  height: number;
  nodes: Array<{ name: string; x: number; y: number }>;
  edges: Array<{ from: string; to: string; points: Array<{ x: number; y: number }> }>;
}

/** Dependencies as edges (a chain DAG's steps come with `depends` on the step before, filled in by the parser). */
function edgesOf(steps: Schemas['Step'][]): Array<[string, string]> {
  return steps.flatMap((step) => step.depends.map((d): [string, string] => [d, step.name]));
}

function layout(steps: Schemas['Step'][]): Layout {
  const g = new dagre.graphlib.Graph();
  // tight-tree ranks in a fraction of network-simplex's time, with the same layers for step graphs.
  g.setGraph({ rankdir: 'LR', nodesep: 18, ranksep: 48, marginx: 8, marginy: 8, ranker: 'tight-tree' });
  g.setDefaultEdgeLabel(() => ({}));
  for (const step of steps) g.setNode(step.name, { width: NODE_W, height: NODE_H });
  const names = new Set(steps.map((s) => s.name));
  const edges = edgesOf(steps).filter(([from, to]) => names.has(from) && names.has(to));
  for (const [from, to] of edges) g.setEdge(from, to);
  dagre.layout(g, { disableOptimalOrderHeuristic: steps.length > ORDERING_LIMIT });
  const graph = g.graph() as { width?: number; height?: number };
  return {
    width: graph.width ?? 0,
    height: graph.height ?? 0,
    nodes: steps.map((s) => {
      const n = g.node(s.name) as { x: number; y: number };
      return { name: s.name, x: n.x, y: n.y };
    }),
    edges: edges.map(([from, to]) => ({ from, to, points: (g.edge(from, to) as { points?: Array<{ x: number; y: number }> }).points ?? [] })),
  };
}

/** The steps laid out left to right (dagre), each coloured by its status in `nodes` when given. */
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
