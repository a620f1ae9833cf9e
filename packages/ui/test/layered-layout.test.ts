// The step graph's layout: every dependency points right, nodes of a rank never overlap, long
// edges go around the ranks they cross, crossings are removed where an order without them
// exists, and a 200-step graph lays out in milliseconds.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { layeredLayout, type Layout, type Point } from '../src/lib/layered-layout.js';

const OPTIONS = { nodeWidth: 180, nodeHeight: 44, rankGap: 48, nodeGap: 18, margin: 8 };

function position(laid: Layout, name: string): { x: number; y: number } {
  const node = laid.nodes.find((n) => n.name === name);
  assert.ok(node, `node ${name}`);
  return node;
}

function assertNoOverlap(laid: Layout): void {
  const byColumn = new Map<number, number[]>();
  for (const n of laid.nodes) byColumn.set(n.x, [...(byColumn.get(n.x) ?? []), n.y]);
  for (const ys of byColumn.values()) {
    ys.sort((a, b) => a - b);
    for (let i = 1; i < ys.length; i++) assert.ok((ys[i] as number) - (ys[i - 1] as number) >= OPTIONS.nodeHeight + OPTIONS.nodeGap - 1e-6, `rows ${ys[i - 1]} and ${ys[i]} overlap`);
  }
  for (const n of laid.nodes) {
    assert.ok(n.y - OPTIONS.nodeHeight / 2 >= 0 && n.y + OPTIONS.nodeHeight / 2 <= laid.height, `${n.name} inside the drawing`);
    assert.ok(n.x + OPTIONS.nodeWidth / 2 <= laid.width, `${n.name} inside the drawing`);
  }
}

/** 200 steps in layers of ten, each depending on two steps of the layer before (the bench's graph). */
function wide(): { names: string[]; edges: Array<[string, string]> } {
  const names: string[] = [];
  const edges: Array<[string, string]> = [];
  for (let i = 0; i < 200; i++) {
    names.push(`s${i}`);
    const layer = Math.floor(i / 10);
    if (layer > 0) edges.push([`s${(layer - 1) * 10 + (i % 10)}`, `s${i}`], [`s${(layer - 1) * 10 + ((i + 1) % 10)}`, `s${i}`]);
  }
  return { names, edges };
}

function segmentsCross(a: [{ x: number; y: number }, { x: number; y: number }], b: [{ x: number; y: number }, { x: number; y: number }]): boolean {
  const side = (p: { x: number; y: number }, q: { x: number; y: number }, r: { x: number; y: number }) => Math.sign((q.x - p.x) * (r.y - p.y) - (q.y - p.y) * (r.x - p.x));
  return side(a[0], a[1], b[0]) * side(a[0], a[1], b[1]) < 0 && side(b[0], b[1], a[0]) * side(b[0], b[1], a[1]) < 0;
}

describe('layeredLayout', () => {
  test('a chain goes left to right on one row', () => {
    const laid = layeredLayout(['a', 'b', 'c'], [['a', 'b'], ['b', 'c']], OPTIONS);
    const [a, b, c] = ['a', 'b', 'c'].map((n) => position(laid, n));
    assert.ok(a && b && c);
    assert.ok(a.x < b.x && b.x < c.x);
    assert.equal(a.y, b.y);
    assert.equal(b.y, c.y);
    assert.deepEqual(laid.edges[0]?.points, [{ x: a.x + 90, y: a.y }, { x: b.x - 90, y: b.y }]);
  });

  test('a fan-out stacks its branches without overlap; independent steps share the first rank', () => {
    const laid = layeredLayout(['root', 'x', 'y', 'z', 'alone'], [['root', 'x'], ['root', 'y'], ['root', 'z']], OPTIONS);
    assert.equal(position(laid, 'alone').x, position(laid, 'root').x);
    assert.ok(position(laid, 'x').x > position(laid, 'root').x);
    assertNoOverlap(laid);
  });

  test('an edge that skips ranks runs level through each rank it crosses, clear of the nodes there', () => {
    const laid = layeredLayout(['a', 'b', 'c', 'd'], [['a', 'b'], ['b', 'c'], ['c', 'd'], ['a', 'd']], OPTIONS);
    const long = laid.edges.find((e) => e.from === 'a' && e.to === 'd');
    assert.ok(long);
    assert.equal(long.points.length, 6, 'two points for each of the two ranks crossed');
    for (const middle of ['b', 'c']) {
      const node = position(laid, middle);
      const inColumn: Point[] = long.points.filter((q) => Math.abs(q.x - node.x) <= OPTIONS.nodeWidth / 2);
      assert.equal(inColumn.length, 2);
      for (const p of inColumn) assert.ok(Math.abs(p.y - node.y) >= OPTIONS.nodeHeight / 2, `the edge passes ${middle} outside its box`);
    }
  });

  test('edges out of order in the input are uncrossed', () => {
    // a->d and b->c cross when the second rank keeps the input order (c above d).
    const laid = layeredLayout(['a', 'b', 'c', 'd'], [['a', 'd'], ['b', 'c']], OPTIONS);
    const [ad, bc] = laid.edges.map((e) => [e.points[0], e.points[e.points.length - 1]] as [{ x: number; y: number }, { x: number; y: number }]);
    assert.ok(ad && bc);
    assert.equal(segmentsCross(ad, bc), false);
  });

  test('a cycle, self-dependency, duplicate or unknown dependency does not break the layout', () => {
    const laid = layeredLayout(['a', 'b', 'c'], [['a', 'b'], ['b', 'c'], ['c', 'a'], ['a', 'a'], ['a', 'b'], ['ghost', 'c']], OPTIONS);
    assert.equal(laid.nodes.length, 3);
    assert.equal(laid.edges.length, 2, 'the edge closing the cycle, the self edge, the duplicate and the unknown one are left out');
    assertNoOverlap(laid);
    assert.deepEqual(layeredLayout([], [], OPTIONS), { width: 0, height: 0, nodes: [], edges: [] });
  });

  // Its speed is the UI bench's run page with a 200-step graph, not a timed test.
  test('200 steps in twenty ranks: no overlap, every edge points right', () => {
    const { names, edges } = wide();
    const laid = layeredLayout(names, edges, OPTIONS);
    assertNoOverlap(laid);
    assert.equal(new Set(laid.nodes.map((n) => n.x)).size, 20);
    for (const e of laid.edges) assert.ok(position(laid, e.to).x > position(laid, e.from).x, `${e.from} -> ${e.to} points right`);
  });
});
