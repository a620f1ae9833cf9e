// The coordinator's own executor alone (issue 23 target 1 without Dagu), for profiling it:
//   node --conditions=source --import tsx packages/worker/bench/local-only.ts [postgres|pglite]
// TRELLIS_CPU_PROF_DIR=<dir> writes a CPU profile of the coordinator process there (test-e2e/support/cluster.ts).
import { IN_FLIGHT, closeLocalAgent, measureLocalExecutor, type Backend } from './local.js';

const backend: Backend = process.argv[2] === 'pglite' ? 'pglite' : 'postgres';
try {
  const figures = await measureLocalExecutor(backend, console.log);
  const sorted = [...figures.submitToFinish].sort((a, b) => a - b);
  console.log(`submit-to-finish p50 ${(sorted[Math.floor(sorted.length / 2)] ?? 0).toFixed(1)} ms (${IN_FLIGHT} in flight)`);
} finally {
  closeLocalAgent();
}
