// What the coordinator benchmarks share: the 1,000 varied DAGs they list, and the percentile
// their latency figures use.
import type { BenchDag } from '@trellis/store/testing';

const PREFIXES = ['etl', 'report', 'sync', 'backup', 'ingest', 'cleanup', 'train', 'export', 'billing', 'audit'];
const TEAMS = ['core', 'data', 'web', 'ml', 'ops'];

/** DAG i: a varied name, labels on two in three, a schedule on one in twenty, 1-3 steps. */
export function benchDag(i: number): BenchDag {
  const fileName = `${PREFIXES[i % PREFIXES.length] ?? 'dag'}-${TEAMS[(i * 7) % TEAMS.length] ?? 'x'}-${String(i).padStart(4, '0')}`;
  const labels = i % 3 === 0 ? [] : [`team=${TEAMS[i % TEAMS.length] ?? 'x'}`, ...(i % 4 === 0 ? ['nightly'] : [])];
  const steps = Array.from({ length: 1 + (i % 3) }, (_, s) => `  - name: s${s}\n    command: echo step ${s}${s > 0 ? `\n    depends: [s${s - 1}]` : ''}`);
  const yaml = [
    `description: benchmark DAG ${i}`,
    ...(labels.length > 0 ? [`labels: [${labels.join(', ')}]`] : []),
    ...(i % 20 === 0 ? [`schedule: "${i % 60} ${i % 24} * * *"`] : []),
    'type: graph',
    'steps:',
    ...steps,
    '',
  ].join('\n');
  return { name: fileName, fileName, yaml, labels };
}

/** Nearest-rank percentile. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}
