// A worker loads its engine with its first task; when that load fails (its files replaced under
// it by an upgrade in place, say), the worker goes on and tries again with the next task. Its
// onEngineLoad hook (where `trellis worker` lets V8 optimize again) runs before each load. The
// worker is a real process running a copy of the built worker package, so one of its files can
// go missing without touching the build other tests use (run `npm run build` first).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';

const REPO = resolve(import.meta.dirname, '..', '..', '..');
const WORKER_PACKAGE = join(REPO, 'packages', 'worker');

const LOAD_MARK = 'onEngineLoad called';

/** The daemon as `trellis worker` runs it, from the copy; SIGTERM stops it. */
const DRIVER = `import { WorkerDaemon, createWorkerLogger, loadWorkerConfig } from './worker/dist/index.js';
const config = loadWorkerConfig(JSON.parse(process.argv[2]), process.env);
const daemon = new WorkerDaemon(config, createWorkerLogger(config.id, 'info'), { onEngineLoad: () => console.log('${LOAD_MARK}') });
process.once('SIGTERM', () => void daemon.shutdown());
await daemon.start();
await daemon.finished;
`;

let t: TestCoordinator;
let copy = '';
let worker: ChildProcess | undefined;
let output = '';

before(async () => {
  if (!existsSync(join(WORKER_PACKAGE, 'dist', 'daemon.js'))) throw new Error('the worker is not built: run `npm run build` before this test');
  t = await startTestCoordinator('worker_engine_load', { 'on-worker': 'worker_selector:\n  pool: engine-load\nsteps:\n  - {name: s, command: echo ran on the worker}\n' });
  copy = mkdtempSync(join(tmpdir(), 'trellis-worker-copy-'));
  cpSync(join(WORKER_PACKAGE, 'dist'), join(copy, 'worker', 'dist'), { recursive: true });
  cpSync(join(WORKER_PACKAGE, 'package.json'), join(copy, 'worker', 'package.json'));
  // The copy's imports (@trellis/core, @grpc/grpc-js, ...) resolve from the repository's packages.
  symlinkSync(join(REPO, 'node_modules'), join(copy, 'node_modules'));
  writeFileSync(join(copy, 'start-worker.mjs'), DRIVER);
});

after(async () => {
  if (worker !== undefined && worker.exitCode === null && worker.signalCode === null) {
    const exited = new Promise((r) => worker?.once('exit', r));
    worker.kill('SIGTERM');
    await exited;
  }
  await t.stop();
  rmSync(copy, { recursive: true, force: true });
});

async function until(what: string, check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; worker output:\n${output}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('a worker whose engine failed to load keeps polling and loads it with the next task', async () => {
  const engineHost = join(copy, 'worker', 'dist', 'tasks', 'engine-host.js');
  renameSync(engineHost, `${engineHost}.away`);
  const raw = { coordinator: t.coordinator.grpcAddress, id: 'worker-engine-load', labels: 'pool=engine-load', pollers: '1', workDir: join(copy, 'work'), shutdownGraceSec: '1' };
  const child = spawn(process.execPath, [join(copy, 'start-worker.mjs'), JSON.stringify(raw)], { stdio: ['ignore', 'pipe', 'pipe'] });
  worker = child;
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));

  assert.equal((await t.call('POST', '/dags/on-worker/start', { dagRunId: 'first' })).status, 200);
  await until('the failed engine load', () => output.includes('could not load the engine') || child.exitCode !== null);
  assert.equal(child.exitCode, null, `the worker is still running after the failed load:\n${output}`);
  renameSync(`${engineHost}.away`, engineHost);

  // The task it could not run went back to the queue; the next hand-out loads the engine.
  const first = await t.waitForRunStatus('on-worker', 'first', [2, 3, 4], 60_000);
  assert.equal(first.status, 4, `${JSON.stringify(first)}\nworker output:\n${output}`);
  assert.equal((await t.call('POST', '/dags/on-worker/start', { dagRunId: 'second' })).status, 200);
  const second = await t.waitForRunStatus('on-worker', 'second', [2, 3, 4], 30_000);
  assert.equal(second.status, 4, JSON.stringify(second));
  assert.equal(child.exitCode, null, 'the worker still runs');
  // Once for the failed load, once for the load that worked; not for the second run's task.
  assert.equal(output.split(LOAD_MARK).length - 1, 2, output);
});
