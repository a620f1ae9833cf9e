// Search latency over loopback HTTP with 1,000 DAG specs and 1,000 documents: result pages of
// /search/dags and /search/docs (first pages and cursor pages), one item's matches, and the
// un-paged /docs/search and /dags/search, for common, rare, absent and mixed-case words.
//   npm run bench -w packages/coordinator
// PGlite by default; TRELLIS_TEST_DATABASE_URL for PostgreSQL (search reads no database either way).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { openTestDb } from '@trellis/store/testing';
import { createSilentLogger, loadServerConfig, startCoordinator } from '@trellis/coordinator';

const DAG_COUNT = 1_000;
const DOC_COUNT = 1_000;
const WARMUP_ROUNDS = 3;
const MEASURED_ROUNDS = 20;
const P99_TARGET_MS = 50;
const fmt = (n: number): string => n.toLocaleString('en-US');

const TEAMS = ['core', 'data', 'web', 'ml', 'ops'];
const WORDS = ['deploy', 'rollback', 'database', 'migration', 'incident', 'pager', 'backup', 'restore', 'latency', 'capacity'];

/** DAG i: 3-8 steps with commands, a description, labels; about 0.5-1 KB. */
function dagSpec(i: number): string {
  const steps = Array.from({ length: 3 + (i % 6) }, (_, s) => [`  - name: step${s}`, `    command: ./run.sh ${WORDS[(i + s) % WORDS.length] ?? 'x'} --team ${TEAMS[i % TEAMS.length] ?? 'x'} --shard ${s}`, ...(s > 0 ? [`    depends: [step${s - 1}]`] : [])]);
  return [`description: Nightly ${WORDS[i % WORDS.length] ?? 'x'} job number ${i}`, `labels: [team=${TEAMS[i % TEAMS.length] ?? 'x'}]`, 'type: graph', 'steps:', ...steps.flat(), ''].join('\n');
}

/** Document i: a frontmatter title and 40-80 lines of prose; about 3-6 KB. */
function docText(i: number): string {
  const lines = Array.from({ length: 40 + (i % 41) }, (_, l) => `Line ${l}: when the ${WORDS[(i + l) % WORDS.length] ?? 'x'} alarm fires, page the ${TEAMS[(i + l) % TEAMS.length] ?? 'x'} team and follow the checklist for case ${i}-${l}.`);
  return ['---', `title: Runbook ${i}`, '---', `# Runbook ${i}`, ...lines, ''].join('\n');
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

async function timed(url: string): Promise<{ ms: number; body: Record<string, unknown> }> {
  const started = performance.now();
  const res = await fetch(url);
  const body = (await res.json()) as Record<string, unknown>;
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${JSON.stringify(body)}`);
  return { ms: performance.now() - started, body };
}

const root = mkdtempSync(join(tmpdir(), 'trellis-search-bench-'));
const dagsDir = join(root, 'dags');
const docsDir = join(root, 'docs');
mkdirSync(dagsDir);
for (let i = 0; i < DAG_COUNT; i++) writeFileSync(join(dagsDir, `job-${TEAMS[i % TEAMS.length] ?? 'x'}-${String(i).padStart(4, '0')}.yaml`), dagSpec(i));
for (let i = 0; i < DOC_COUNT; i++) {
  const file = join(docsDir, TEAMS[i % TEAMS.length] ?? 'x', `runbook-${String(i).padStart(4, '0')}.md`);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, docText(i));
}

const { db, cleanup } = await openTestDb('search_bench');
const config = loadServerConfig({ cwd: root, env: {}, overrides: { port: 0, grpcPort: -1, dagsDir, docsDir, dataDir: join(root, 'data'), timezone: 'UTC', shutdownGraceSec: 0, schedulerEnabled: false } });
const coordinator = await startCoordinator(config, createSilentLogger(), { watch: false, db });
try {
  const api = coordinator.apiUrl;
  const queries = ['ROLLBACK', 'team', 'case 512-7', 'no-such-text-anywhere', 'Pager'];
  const samples = new Map<string, number[]>();
  const record = (label: string, ms: number, round: number) => {
    if (round < WARMUP_ROUNDS) return;
    samples.set(label, [...(samples.get(label) ?? []), ms]);
  };
  for (let round = 0; round < WARMUP_ROUNDS + MEASURED_ROUNDS; round++) {
    for (const q of queries.map(encodeURIComponent)) {
      for (const kind of ['dags', 'docs']) {
        const first = await timed(`${api}/search/${kind}?q=${q}`);
        record(`GET /search/${kind} (first page)`, first.ms, round);
        if (typeof first.body.nextCursor === 'string') record(`GET /search/${kind} (cursor page)`, (await timed(`${api}/search/${kind}?q=${q}&cursor=${encodeURIComponent(first.body.nextCursor)}`)).ms, round);
      }
      record('GET /search/dags/{fileName}/matches', (await timed(`${api}/search/dags/job-core-0500/matches?q=${q}`)).ms, round);
      record('GET /search/docs/matches', (await timed(`${api}/search/docs/matches?path=core%2Frunbook-0500&q=${q}`)).ms, round);
      record('GET /docs/search (un-paged)', (await timed(`${api}/docs/search?q=${q}`)).ms, round);
      record('GET /dags/search (un-paged)', (await timed(`${api}/dags/search?q=${q}`)).ms, round);
    }
  }
  const dagsFound = ((await timed(`${api}/dags/search?q=steps`)).body.results as unknown[]).length;
  const docsFound = ((await timed(`${api}/docs/search?q=runbook`)).body.results as unknown[]).length;
  if (dagsFound !== DAG_COUNT || docsFound !== DOC_COUNT) throw new Error(`indexed ${dagsFound} DAGs and ${docsFound} documents, not ${DAG_COUNT} and ${DOC_COUNT}`);
  console.log(`search over ${fmt(DAG_COUNT)} DAGs and ${fmt(DOC_COUNT)} documents (loopback HTTP), ${MEASURED_ROUNDS} rounds of the queries ${JSON.stringify(queries)}`);
  let worst = 0;
  for (const [label, times] of samples) {
    const p99 = percentile(times, 99);
    worst = Math.max(worst, p99);
    console.log(`  ${label.padEnd(40)} n=${String(times.length).padStart(4)}  p50 ${percentile(times, 50).toFixed(1).padStart(6)} ms  p99 ${p99.toFixed(1).padStart(6)} ms`);
  }
  console.log(`  worst p99 ${worst.toFixed(1)} ms (target under ${P99_TARGET_MS} ms): ${worst < P99_TARGET_MS ? 'met' : 'NOT met'}`);
} finally {
  await coordinator.close();
  await cleanup();
  rmSync(root, { recursive: true, force: true });
}
