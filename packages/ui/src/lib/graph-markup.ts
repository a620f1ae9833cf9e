import type { Layout } from './layered-layout.js';
import { toneOf } from './status.js';

/**
 * The step graph as SVG markup. A 200-step graph is some 1,800 elements; the browser's parser
 * makes them from one string several times faster than React makes them one by one, and the
 * graph's shape (all this holds) changes far more rarely than its statuses, which
 * `applyStatuses` sets in place.
 */

export const NODE_W = 180;
export const NODE_H = 44;
/** The status word a node shows before its status is known. */
export const NO_STATUS = 'not started';

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const SPECIAL = /[&<>"']/;
const SPECIALS = /[&<>"']/g;

/** Text safe in SVG content and in a quoted attribute (step names are the user's). */
export function escapeMarkup(text: string): string {
  // Most names need nothing: the test is far cheaper than a replace with a callback.
  return SPECIAL.test(text) ? text.replace(SPECIALS, (c) => ENTITIES[c] ?? c) : text;
}

/** The name a node shows: long names are cut, the full one stays in `data-step`. */
function shownName(name: string): string {
  return name.length > 22 ? `${name.slice(0, 21)}…` : name;
}

/**
 * Edges, then one `g.node` per step (focusable buttons when `interactive`), named by the text
 * element `${idPrefix}-${index}`; every node starts as NO_STATUS.
 */
export function graphMarkup(laid: Layout, idPrefix: string, interactive: boolean): string {
  const parts = ['<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" class="edge-head"/></marker></defs>'];
  for (const e of laid.edges) parts.push(`<polyline class="edge" points="${e.points.map((p) => `${p.x},${p.y}`).join(' ')}" marker-end="url(#arrow)"/>`);
  const role = interactive ? 'role="button" tabindex="0"' : 'role="img"';
  laid.nodes.forEach((n, i) => {
    const id = escapeMarkup(`${idPrefix}-${i}`);
    parts.push(
      `<g transform="translate(${n.x - NODE_W / 2},${n.y - NODE_H / 2})" class="node tone-${toneOf(NO_STATUS)}" data-step="${escapeMarkup(n.name)}" data-status="${NO_STATUS}" ${role} aria-labelledby="${id}">`,
      `<rect width="${NODE_W}" height="${NODE_H}" rx="6"/><text id="${id}"><tspan x="10" y="18" class="node-name">${escapeMarkup(shownName(n.name))}</tspan><tspan x="10" y="34" class="node-status"> ${NO_STATUS}</tspan></text></g>`,
    );
  });
  return parts.join('');
}
