import { useId, useLayoutEffect, useMemo, useRef, type KeyboardEvent, type MouseEvent } from 'react';
import type { Schemas } from '../api/client';
import { graphMarkup, NO_STATUS, NODE_H, NODE_W } from '../lib/graph-markup';
import { layeredLayout, type Layout } from '../lib/layered-layout';
import { nodeStatusWord, toneOf } from '../lib/status';

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

/** Sets each drawn node's status word and colour where it changed (the drawing is not made again, so focus stays). */
function applyStatuses(svg: SVGSVGElement, statusOf: Map<string, number>): void {
  for (const g of svg.querySelectorAll<SVGGElement>('g.node')) {
    const status = statusOf.get(g.dataset.step ?? '');
    const word = status !== undefined ? nodeStatusWord(status) : NO_STATUS;
    if (g.dataset.status === word) continue;
    g.dataset.status = word;
    g.setAttribute('class', `node tone-${toneOf(word)}`);
    const text = g.querySelector('.node-status');
    if (text !== null) text.textContent = ` ${word}`;
  }
}

/** The step a click or key press inside the drawing was aimed at. */
function stepAt(target: EventTarget): string | undefined {
  return target instanceof Element ? (target.closest<SVGGElement>('g.node')?.dataset.step ?? undefined) : undefined;
}

/** The steps laid out left to right in layers, each coloured by its status in `nodes` when given. */
export function Graph({ steps, nodes, onSelect }: { steps: Schemas['Step'][]; nodes?: Schemas['Node'][]; onSelect?: (step: string) => void }) {
  // Laid out and drawn again only when the graph's shape changes, not on every status change.
  const shape = JSON.stringify(steps.map((s) => [s.name, s.depends]));
  const laid = useMemo(() => layout(steps), [shape]);
  const idPrefix = useId();
  const interactive = onSelect !== undefined;
  const markup = useMemo(() => ({ __html: graphMarkup(laid, idPrefix, interactive) }), [laid, idPrefix, interactive]);
  const svg = useRef<SVGSVGElement>(null);
  const statuses = (nodes ?? []).map((n) => `${n.step.name}\u0000${n.status}`).join('\u0001');
  // Before the browser paints: the first frame already shows every status.
  useLayoutEffect(() => {
    if (svg.current !== null) applyStatuses(svg.current, new Map((nodes ?? []).map((n) => [n.step.name, n.status])));
  }, [markup, statuses]);
  const select = (step: string | undefined) => {
    if (step !== undefined) onSelect?.(step);
  };
  return (
    <div className="graph-wrap">
      <svg
        ref={svg}
        className="graph"
        width={laid.width}
        height={laid.height}
        viewBox={`0 0 ${laid.width} ${laid.height}`}
        role="group"
        aria-label="Step graph"
        onClick={(e: MouseEvent) => select(stepAt(e.target))}
        onKeyDown={(e: KeyboardEvent) => {
          if (e.key !== 'Enter' && e.key !== ' ') return;
          const step = stepAt(e.target);
          if (step === undefined) return;
          e.preventDefault();
          select(step);
        }}
        dangerouslySetInnerHTML={markup}
      />
    </div>
  );
}
