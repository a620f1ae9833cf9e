// Dagu alone, without our own cluster, for checking the comparison side on its own:
//   node --conditions=source --import tsx packages/worker/bench/dagu-only.ts
import { measureDagu } from './dagu.js';

const figures = await measureDagu({ runs: 40, log: console.log });
console.log(`\nDagu ${figures.version}`);
console.log(`  local runs/s:           ${figures.localRunsPerSec.toFixed(2)}`);
console.log(`  worker runs/s:          ${figures.workerRunsPerSec.toFixed(2)}`);
console.log(`  enqueue->start p50/p99: ${figures.enqueueToStartP50Ms ?? 'n/a'} / ${figures.enqueueToStartP99Ms ?? 'n/a'} ms`);
for (const note of figures.notes) console.log(`  note: ${note}`);
