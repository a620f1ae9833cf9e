/**
 * A layered (Sugiyama-style) left-to-right layout for step graphs: ranks by longest path,
 * long edges through placeholder points, crossings reduced by barycentre sweeps (the best
 * order seen is kept), rows placed near their neighbours. A 200-step graph lays out in a few
 * milliseconds, where dagre took most of a second of the run page's first render.
 */

export interface LayoutOptions {
  nodeWidth: number;
  nodeHeight: number;
  /** Horizontal gap between ranks. */
  rankGap: number;
  /** Vertical gap between nodes of one rank. */
  nodeGap: number;
  margin: number;
}

export interface Point {
  x: number;
  y: number;
}

export interface Layout {
  width: number;
  height: number;
  /** Centres, in the order of the names given. */
  nodes: Array<{ name: string } & Point>;
  edges: Array<{ from: string; to: string; points: Point[] }>;
}

/** The height a long edge's placeholder takes in a rank. */
const LANE = 8;
const SWEEPS = 8;
const PLACEMENT_PASSES = 4;

interface Vertex {
  /** Index of the step, or -1 for a placeholder of a long edge. */
  step: number;
  rank: number;
  preds: number[];
  succs: number[];
}

/** Edges that close a cycle are dropped (a valid DAG has none; a broken spec must not hang the page). */
function acyclicEdges(count: number, edges: Array<[number, number]>): Array<[number, number]> {
  const out: number[][] = Array.from({ length: count }, () => []);
  for (const [from, to] of edges) out[from]?.push(to);
  const state = new Uint8Array(count); // 0 new, 1 on the stack, 2 done
  const back = new Set<string>();
  for (let root = 0; root < count; root++) {
    if (state[root] !== 0) continue;
    const stack: Array<[number, number]> = [[root, 0]];
    state[root] = 1;
    while (stack.length > 0) {
      const top = stack[stack.length - 1] as [number, number];
      const [v, next] = top;
      const targets = out[v] ?? [];
      if (next >= targets.length) {
        state[v] = 2;
        stack.pop();
        continue;
      }
      top[1] = next + 1;
      const w = targets[next] as number;
      if (state[w] === 1) back.add(`${v}>${w}`);
      else if (state[w] === 0) {
        state[w] = 1;
        stack.push([w, 0]);
      }
    }
  }
  return edges.filter(([from, to]) => !back.has(`${from}>${to}`));
}

/** Longest path from a source: every edge points to a higher rank. */
function ranksOf(count: number, edges: Array<[number, number]>): number[] {
  const indegree = new Array<number>(count).fill(0);
  const out: number[][] = Array.from({ length: count }, () => []);
  for (const [from, to] of edges) {
    out[from]?.push(to);
    indegree[to] = (indegree[to] ?? 0) + 1;
  }
  const rank = new Array<number>(count).fill(0);
  const ready = indegree.flatMap((d, i) => (d === 0 ? [i] : []));
  for (let head = 0; head < ready.length; head++) {
    const v = ready[head] as number;
    for (const w of out[v] ?? []) {
      rank[w] = Math.max(rank[w] ?? 0, (rank[v] ?? 0) + 1);
      indegree[w] = (indegree[w] ?? 0) - 1;
      if (indegree[w] === 0) ready.push(w);
    }
  }
  return rank;
}

/** Vertices (steps plus one placeholder per rank a long edge crosses) and each edge's chain of vertices. */
function buildVertices(ranks: number[], edges: Array<[number, number]>): { vertices: Vertex[]; chains: number[][] } {
  const vertices: Vertex[] = ranks.map((rank, step) => ({ step, rank, preds: [], succs: [] }));
  const link = (a: number, b: number) => {
    (vertices[a] as Vertex).succs.push(b);
    (vertices[b] as Vertex).preds.push(a);
  };
  const chains = edges.map(([from, to]) => {
    const chain = [from];
    for (let r = (ranks[from] ?? 0) + 1; r < (ranks[to] ?? 0); r++) {
      vertices.push({ step: -1, rank: r, preds: [], succs: [] });
      chain.push(vertices.length - 1);
    }
    chain.push(to);
    for (let i = 1; i < chain.length; i++) link(chain[i - 1] as number, chain[i] as number);
    return chain;
  });
  return { vertices, chains };
}

/** Crossings between two adjacent ranks: inversions of the lower ends, counted with a Fenwick tree. */
function crossingsBetween(upper: number[], lowerPos: Map<number, number>, vertices: Vertex[], size: number): number {
  const ends: number[] = [];
  for (const v of upper) {
    const targets = (vertices[v] as Vertex).succs.map((w) => lowerPos.get(w) ?? 0).sort((a, b) => a - b);
    ends.push(...targets);
  }
  const tree = new Array<number>(size + 1).fill(0);
  let crossings = 0;
  for (let i = 0; i < ends.length; i++) {
    const p = (ends[i] as number) + 1;
    // Ends seen so far that lie below this one cross it.
    let atOrBelow = 0;
    for (let j = p; j > 0; j -= j & -j) atOrBelow += tree[j] as number;
    crossings += i - atOrBelow;
    for (let j = p; j <= size; j += j & -j) tree[j] = (tree[j] as number) + 1;
  }
  return crossings;
}

function totalCrossings(layers: number[][], vertices: Vertex[]): number {
  let sum = 0;
  for (let r = 0; r + 1 < layers.length; r++) {
    const lower = layers[r + 1] as number[];
    sum += crossingsBetween(layers[r] as number[], new Map(lower.map((v, i) => [v, i])), vertices, lower.length);
  }
  return sum;
}

/** Reorders each rank by the mean position of its neighbours in the rank before (down) or after (up). */
function sweep(layers: number[][], vertices: Vertex[], down: boolean): void {
  const range = down ? layers.map((_, i) => i).slice(1) : layers.map((_, i) => i).slice(0, -1).reverse();
  for (const r of range) {
    const fixed = layers[down ? r - 1 : r + 1] as number[];
    const pos = new Map(fixed.map((v, i) => [v, i]));
    const layer = layers[r] as number[];
    const keyed = layer.map((v, i) => {
      const near = down ? (vertices[v] as Vertex).preds : (vertices[v] as Vertex).succs;
      const mean = near.length === 0 ? i : near.reduce((s, w) => s + (pos.get(w) ?? 0), 0) / near.length;
      return { v, key: mean, i };
    });
    keyed.sort((a, b) => a.key - b.key || a.i - b.i);
    layers[r] = keyed.map((k) => k.v);
  }
}

function orderLayers(vertices: Vertex[], rankCount: number): number[][] {
  const layers: number[][] = Array.from({ length: rankCount }, () => []);
  vertices.forEach((v, i) => layers[v.rank]?.push(i));
  let best = layers.map((l) => [...l]);
  let fewest = totalCrossings(layers, vertices);
  // Sweeps stop once a sweep down and one up in a row have found no better order: later ones
  // rarely do (the 200-step graph settles after two of its eight).
  for (let i = 0, idle = 0; i < SWEEPS && fewest > 0 && idle < 2; i++) {
    sweep(layers, vertices, i % 2 === 0);
    const crossings = totalCrossings(layers, vertices);
    if (crossings < fewest) {
      fewest = crossings;
      best = layers.map((l) => [...l]);
      idle = 0;
    } else idle++;
  }
  return best;
}

/**
 * Rows: each vertex is pulled toward the mean row of its neighbours, then the rank is packed
 * (from the top and from the bottom, averaged, which keeps order and gaps).
 */
function placeRows(layers: number[][], vertices: Vertex[], options: LayoutOptions): Float64Array {
  const y = new Float64Array(vertices.length);
  const heightOf = (v: number) => ((vertices[v] as Vertex).step >= 0 ? options.nodeHeight : LANE);
  const gapBetween = (a: number, b: number) => (heightOf(a) + heightOf(b)) / 2 + options.nodeGap;
  const span = (layer: number[]) => layer.reduce((s, v, i) => s + heightOf(v) + (i > 0 ? options.nodeGap : 0), 0);
  const tallest = Math.max(0, ...layers.map(span));
  for (const layer of layers) {
    let at = (tallest - span(layer)) / 2;
    for (const v of layer) {
      y[v] = at + heightOf(v) / 2;
      at += heightOf(v) + options.nodeGap;
    }
  }
  for (let pass = 0; pass < PLACEMENT_PASSES; pass++) {
    const down = pass % 2 === 0;
    const order = down ? layers : [...layers].reverse();
    for (const layer of order) {
      const wanted = layer.map((v) => {
        const near = down ? (vertices[v] as Vertex).preds : (vertices[v] as Vertex).succs;
        return near.length === 0 ? (y[v] as number) : near.reduce((s, w) => s + (y[w] as number), 0) / near.length;
      });
      const fromTop = [...wanted];
      for (let i = 1; i < layer.length; i++) fromTop[i] = Math.max(wanted[i] as number, (fromTop[i - 1] as number) + gapBetween(layer[i - 1] as number, layer[i] as number));
      const fromBottom = [...wanted];
      for (let i = layer.length - 2; i >= 0; i--) fromBottom[i] = Math.min(wanted[i] as number, (fromBottom[i + 1] as number) - gapBetween(layer[i] as number, layer[i + 1] as number));
      layer.forEach((v, i) => {
        y[v] = ((fromTop[i] as number) + (fromBottom[i] as number)) / 2;
      });
    }
  }
  return y;
}

export function layeredLayout(names: string[], links: Array<[string, string]>, options: LayoutOptions): Layout {
  const index = new Map(names.map((n, i) => [n, i]));
  const seen = new Set<string>();
  const indexed: Array<[number, number]> = [];
  for (const [from, to] of links) {
    const a = index.get(from);
    const b = index.get(to);
    if (a === undefined || b === undefined || a === b || seen.has(`${a}>${b}`)) continue;
    seen.add(`${a}>${b}`);
    indexed.push([a, b]);
  }
  const edges = acyclicEdges(names.length, indexed);
  const ranks = ranksOf(names.length, edges);
  const rankCount = names.length === 0 ? 0 : Math.max(...ranks) + 1;
  const { vertices, chains } = buildVertices(ranks, edges);
  const layers = orderLayers(vertices, rankCount);
  const rows = placeRows(layers, vertices, options);
  const top = Math.min(0, ...Array.from(rows, (r, v) => r - ((vertices[v] as Vertex).step >= 0 ? options.nodeHeight : LANE) / 2));
  const yOf = (v: number) => (rows[v] as number) - top + options.margin;
  const xOf = (v: number) => options.margin + (vertices[v] as Vertex).rank * (options.nodeWidth + options.rankGap) + options.nodeWidth / 2;
  const bottom = Math.max(0, ...Array.from(rows, (r, v) => r - top + ((vertices[v] as Vertex).step >= 0 ? options.nodeHeight : LANE) / 2));
  const half = options.nodeWidth / 2;
  return {
    width: rankCount === 0 ? 0 : options.margin * 2 + rankCount * options.nodeWidth + (rankCount - 1) * options.rankGap,
    height: names.length === 0 ? 0 : bottom + options.margin * 2,
    nodes: names.map((name, i) => ({ name, x: xOf(i), y: yOf(i) })),
    edges: chains.map((chain) => {
      const first = chain[0] as number;
      const last = chain[chain.length - 1] as number;
      // A long edge runs level through each rank it crosses, in its placeholder's lane.
      const through = chain.slice(1, -1).flatMap((v) => [
        { x: xOf(v) - half, y: yOf(v) },
        { x: xOf(v) + half, y: yOf(v) },
      ]);
      return {
        from: names[first] as string,
        to: names[last] as string,
        points: [{ x: xOf(first) + half, y: yOf(first) }, ...through, { x: xOf(last) - half, y: yOf(last) }],
      };
    }),
  };
}
