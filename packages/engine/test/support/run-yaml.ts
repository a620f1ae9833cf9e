import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { loadDag, resolveStartParams, type Dag, type ResolvedParams } from '@trellis/core';
import { MemoryReporter, runDag, type RunHandle, type RunOptions, type RunResult, type SubRunLauncher } from '@trellis/engine';

export interface YamlRun {
  handle: RunHandle;
  reporter: MemoryReporter;
  logDir: string;
  dag: Dag;
  result: Promise<RunResult>;
}

const made: string[] = [];

/** Temporary directories the tests made; removed by `cleanupRuns()` in an `after` hook. */
export function cleanupRuns(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export function tempDir(prefix = 'trellis-engine-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

export function parse(yaml: string, fileName = 'test'): { dag: Dag; localDags: Dag[] } {
  const loaded = loadDag(yaml, { fileName });
  assert.deepEqual(loaded.errors, [], 'fixture YAML must be valid');
  assert.ok(loaded.dag);
  return { dag: loaded.dag, localDags: loaded.localDags.flatMap((l) => (l.dag !== undefined ? [l.dag] : [])) };
}

/** Runs children in-process with the engine, resolving local DAGs by name. */
export function inProcessLauncher(logRoot: string, extra: Partial<RunOptions> = {}): SubRunLauncher {
  const launcher: SubRunLauncher = (request) => {
    if (request.localDag === undefined) {
      return { done: Promise.resolve({ status: 2, outputs: {}, error: `no DAG named ${request.dagName}` }), stop: () => undefined };
    }
    const resolved = resolveStartParams(request.localDag.params, request.params === '' ? undefined : request.params);
    const params: ResolvedParams = resolved.ok ? resolved.params : [];
    const handle = runDag({
      dag: request.localDag,
      params,
      identity: {
        dagName: request.dagName,
        dagRunId: request.dagRunId,
        attemptId: 'a1',
        rootDagRunName: request.parent.rootDagRunName,
        rootDagRunId: request.parent.rootDagRunId,
        parentDagRunName: request.parent.dagName,
        parentDagRunId: request.parent.dagRunId,
      },
      logDir: join(logRoot, 'children', request.dagRunId),
      env: request.env,
      maskValues: request.maskValues,
      reporter: new MemoryReporter(),
      launchSubRun: launcher,
      ...extra,
    });
    return { done: handle.done.then((r) => ({ status: r.status, outputs: r.outputs.outputs, ...(r.snapshot.error !== '' ? { error: r.snapshot.error } : {}) })), stop: () => handle.stop() };
  };
  return launcher;
}

export function startYaml(yaml: string, options: Partial<RunOptions> & { paramsJson?: string } = {}): YamlRun {
  const { dag, localDags } = parse(yaml);
  const logDir = tempDir();
  const reporter = new MemoryReporter();
  const resolved = resolveStartParams(dag.params, options.paramsJson);
  assert.ok(resolved.ok, JSON.stringify(resolved));
  const handle = runDag({
    dag,
    localDags,
    params: resolved.params,
    identity: { dagName: dag.name, dagRunId: 'run-1', attemptId: 'attempt-1', rootDagRunName: dag.name, rootDagRunId: 'run-1', parentDagRunName: '', parentDagRunId: '' },
    logDir,
    reporter,
    launchSubRun: inProcessLauncher(logDir),
    ...options,
  });
  return { handle, reporter, logDir, dag, result: handle.done };
}

export async function runYaml(yaml: string, options: Partial<RunOptions> & { paramsJson?: string } = {}): Promise<RunResult & { reporter: MemoryReporter; logDir: string }> {
  const run = startYaml(yaml, options);
  const result = await run.result;
  return { ...result, reporter: run.reporter, logDir: run.logDir };
}

export function nodeOf(result: RunResult, name: string): RunResult['snapshot']['nodes'][number] {
  const node = result.snapshot.nodes.find((n) => n.step.name === name);
  assert.ok(node, `no node ${name}`);
  return node;
}

export function readLog(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
