import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument, stringify } from 'yaml';
import { loadDag, parseBaseConfig } from '@trellis/core';
import { FIXTURE_DIR, fixtureNames } from './fixture-runner.js';

/** Deterministic PRNG (mulberry32), so a failing document can be reproduced from its seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ODD_VALUES: unknown[] = [null, true, false, 0, -1, 1e308, -0.5, '', ' ', '${X}', 're:[', '\u0000', '🤖'.repeat(50), 'x'.repeat(5000), [], {}, [[[[]]]], { a: { b: { c: {} } } }, ['a', 1, null], '0 0 * * *', '@daily', 'CRON_TZ=UTC * * * * *', 'SIGTERM', 'graph', 'chain', 'while', 'until'];
const KEYS = ['name', 'steps', 'depends', 'command', 'type', 'params', 'schedule', 'env', 'retry_policy', 'repeat_policy', 'continue_on', 'handler_on', 'defaults', 'parallel', 'routes', 'value', 'output', 'approval', 'labels', 'preconditions', 'container', 'ssh', 'worker_selector', 'call', '__proto__', 'constructor'];

function pick<T>(rand: () => number, list: readonly T[]): T {
  return list[Math.floor(rand() * list.length)] as T;
}

/** Mutates a parsed document in place a few times: delete, retype, duplicate, nest. */
function mutate(value: unknown, rand: () => number, depth = 0): unknown {
  if (depth > 6) return pick(rand, ODD_VALUES);
  if (Array.isArray(value)) {
    const out = (value as unknown[]).map((v) => (rand() < 0.3 ? mutate(v, rand, depth + 1) : v));
    if (rand() < 0.2) out.push(pick(rand, ODD_VALUES));
    if (rand() < 0.1) out.splice(0, 1);
    if (rand() < 0.05) out.push(...out);
    return out;
  }
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const r = rand();
      if (r < 0.08) continue;
      out[k] = r < 0.35 ? mutate(v, rand, depth + 1) : r < 0.45 ? pick(rand, ODD_VALUES) : v;
    }
    if (rand() < 0.25) out[pick(rand, KEYS)] = pick(rand, ODD_VALUES);
    return out;
  }
  return rand() < 0.5 ? pick(rand, ODD_VALUES) : value;
}

function garble(text: string, rand: () => number): string {
  const chars = [...text];
  const edits = 1 + Math.floor(rand() * 5);
  for (let i = 0; i < edits && chars.length > 0; i += 1) {
    const at = Math.floor(rand() * chars.length);
    const op = rand();
    if (op < 0.3) chars.splice(at, 1);
    else if (op < 0.6) chars.splice(at, 0, pick(rand, [':', '-', ' ', '\n', '\t', '[', '{', '"', "'", '&a', '*a', '!!', '%', '#', '---\n']));
    else chars[at] = String.fromCharCode(Math.floor(rand() * 0xffff));
  }
  return chars.join('');
}

function assertWellFormed(result: { errors: string[] }, input: string, seed: number): void {
  assert.ok(Array.isArray(result.errors), `seed ${seed}: no errors array`);
  for (const e of result.errors) {
    assert.equal(typeof e, 'string', `seed ${seed}`);
    assert.doesNotMatch(e, /\n\s+at .+:\d+:\d+/, `seed ${seed}: stack trace in error for input ${JSON.stringify(input.slice(0, 200))}`);
  }
}

test('thousands of random and mutated documents give results or error strings, never exceptions or hangs', () => {
  const sources = fixtureNames().map((n) => readFileSync(join(FIXTURE_DIR, `${n}.yaml`), 'utf8'));
  const documents = 3000;
  let valid = 0;
  let slowest = 0;
  for (let seed = 1; seed <= documents; seed += 1) {
    const rand = prng(seed);
    const source = pick(rand, sources);
    let input: string;
    if (seed % 3 === 0) input = garble(source, rand);
    else input = stringify(mutate(firstDocument(source), rand));
    const started = performance.now();
    const result = loadDag(input, { fileName: 'fuzz' });
    const base = parseBaseConfig(input);
    slowest = Math.max(slowest, performance.now() - started);
    assertWellFormed(result, input, seed);
    assertWellFormed(base, input, seed);
    if (result.dag !== undefined) valid += 1;
  }
  // Bounded work per document: a generous ceiling that only a pathological (exponential) case would hit.
  assert.ok(slowest < 5000, `slowest document took ${slowest.toFixed(0)} ms`);
  assert.ok(valid > 0, 'mutations should leave some documents valid');
});

/** The first YAML document of a fixture as plain data ({} when it does not parse). */
function firstDocument(text: string): unknown {
  try {
    return parseDocument(text.split(/^---$/m)[0] ?? '').toJS({ maxAliasCount: 100 }) ?? {};
  } catch {
    return {};
  }
}
