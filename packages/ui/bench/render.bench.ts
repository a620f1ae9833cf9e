// Time to first render in Chromium, cold cache, of the DAG list with 1,000 DAGs and of a run
// page with a 200-step graph, against a real coordinator process (embedded PGlite) serving
// the built UI. Prints the median of several visits; target under 500 ms each.
// `--baseline <dist>` measures another build of the UI (for example the previous commit's) in
// the same run, its visits taking turns with this build's, so both see the same machine load.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../../../test-e2e/support/browser.js';

const ROOT = resolve(import.meta.dirname, '..', '..', '..');
const DAGS = 1000;
const STEPS = 200;
const VISITS = 7;

/** 200 steps in layers of ten, each depending on two steps of the layer before. */
function wideDag(): string {
  const lines = ['type: graph', 'steps:'];
  for (let i = 0; i < STEPS; i++) {
    const layer = Math.floor(i / 10);
    const deps = layer === 0 ? [] : [`s${(layer - 1) * 10 + (i % 10)}`, `s${(layer - 1) * 10 + ((i + 1) % 10)}`];
    lines.push(`  - name: s${i}`, '    command: "true"', ...(deps.length > 0 ? [`    depends: [${deps.join(', ')}]`] : []));
  }
  return `${lines.join('\n')}\n`;
}

function writeDags(dir: string): void {
  mkdirSync(dir, { recursive: true });
  for (let i = 0; i < DAGS; i++) {
    const schedule = i % 3 === 0 ? `schedule: "${i % 60} * * * *"\n` : '';
    writeFileSync(join(dir, `dag-${String(i).padStart(4, '0')}.yaml`), `${schedule}group: g${i % 7}\nlabels: [team-${i % 5}]\nsteps:\n  - name: one\n    command: echo ${i}\n`);
  }
  writeFileSync(join(dir, 'wide.yaml'), wideDag());
}

interface Server {
  apiUrl: string;
  stop: () => Promise<void>;
}

/** A coordinator over its own copy of the DAGs, serving the UI built in `uiDir` (default: this package's). */
async function startServer(dir: string, uiDir: string | undefined): Promise<Server> {
  writeDags(join(dir, 'dags'));
  const env = { ...process.env, SVC_ACCESS_LOG: 'false', ...(uiDir !== undefined ? { SVC_UI_DIR: resolve(uiDir) } : {}) };
  const child = spawn(process.execPath, [join(ROOT, 'packages', 'cli', 'dist', 'main.js'), 'server', '--port', '0', '--grpc-port', '-1', '--data-dir', join(dir, 'data'), '--dags-dir', join(dir, 'dags')], { cwd: dir, stdio: ['ignore', 'pipe', 'inherit'], env });
  let out = '';
  const apiUrl = await new Promise<string>((resolveUrl, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const match = /"apiUrl":"([^"]+)"/.exec(out);
      if (match?.[1] !== undefined) resolveUrl(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`the coordinator exited (${code}):\n${out}`)));
  });
  return {
    apiUrl,
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

async function finishedRun(apiUrl: string): Promise<string> {
  const started = (await (await fetch(`${apiUrl}/dags/wide/start`, { method: 'POST' })).json()) as { dagRunId: string };
  for (;;) {
    const { dagRun } = (await (await fetch(`${apiUrl}/dag-runs/wide/${started.dagRunId}`)).json()) as { dagRun: { status: number } };
    if (dagRun.status === 4) return started.dagRunId;
    if (![0, 1, 5].includes(dagRun.status)) throw new Error(`the 200-step run ended with status ${dagRun.status}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Milliseconds from navigation start until `ready` holds in the page, in a fresh (cold) context. */
async function firstRender(browser: Browser, url: string, ready: string): Promise<number> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(url, { waitUntil: 'commit' });
  await page.waitForFunction(ready, undefined, { timeout: 30_000, polling: 'raf' });
  const ms = await page.evaluate(() => performance.now());
  await context.close();
  return ms;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

const { values: options } = parseArgs({ options: { baseline: { type: 'string' } } });
const dir = mkdtempSync(join(tmpdir(), 'trellis-ui-bench-'));
const builds: Array<{ label: string; server: Server }> = [{ label: 'this build', server: await startServer(join(dir, 'this'), undefined) }];
if (options.baseline !== undefined) builds.push({ label: `baseline ${options.baseline}`, server: await startServer(join(dir, 'baseline'), options.baseline) });
const browser = await launchChromium();
try {
  const pages = await Promise.all(
    builds.map(async ({ label, server }) => {
      const origin = new URL(server.apiUrl).origin;
      const runId = await finishedRun(server.apiUrl);
      const figures: Array<[string, string, string]> = [
        // The floor on this machine: a cold context showing a small JSON document, no app at all.
        ['health document (no UI: the floor)', `${server.apiUrl}/health`, 'document.body !== null && document.body.textContent !== ""'],
        [`DAG list, ${DAGS} DAGs`, `${origin}/`, "document.querySelectorAll('.dag-row').length > 0"],
        [`run page, ${STEPS}-step graph`, `${origin}/runs/wide/${runId}`, `document.querySelectorAll('g.node[data-status="succeeded"]').length === ${STEPS}`],
      ];
      return { label, figures };
    }),
  );
  for (let f = 0; f < (pages[0]?.figures.length ?? 0); f++) {
    const times = pages.map(() => [] as number[]);
    // Warm the servers' caches, not the browser's.
    for (const { figures } of pages) await firstRender(browser, figures[f]?.[1] ?? '', figures[f]?.[2] ?? '');
    for (let i = 0; i < VISITS; i++) {
      for (const [b, { figures }] of pages.entries()) times[b]?.push(await firstRender(browser, figures[f]?.[1] ?? '', figures[f]?.[2] ?? ''));
    }
    for (const [b, { label, figures }] of pages.entries()) {
      const ms = times[b] ?? [];
      const who = pages.length > 1 ? ` [${label}]` : '';
      console.log(`ui: first render of the ${figures[f]?.[0]}${who}: median ${median(ms).toFixed(0)} ms over ${VISITS} cold visits (min ${Math.min(...ms).toFixed(0)}, max ${Math.max(...ms).toFixed(0)}; target < 500 ms)`);
    }
  }
} finally {
  await browser.close();
  await Promise.all(builds.map(({ server }) => server.stop()));
  rmSync(dir, { recursive: true, force: true });
}
