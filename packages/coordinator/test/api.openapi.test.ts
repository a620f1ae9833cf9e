// The served OpenAPI document: typed bodies for every operation, honest body-required flags,
// and a TypeScript client generated from it (openapi-typescript) that type-checks under strict.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';

type Json = Record<string, unknown>;
interface Operation {
  operationId: string;
  deprecated?: boolean;
  parameters: Array<{ name: string; in: string }>;
  requestBody?: { required: boolean; content: Record<string, { schema: Json }> };
  responses: Record<string, { content?: Record<string, { schema: Json }>; headers?: Record<string, Json> }>;
}

let t: TestCoordinator;
let doc: { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Json> } };

before(async () => {
  t = await startTestCoordinator('api_openapi', { hello: 'steps:\n  - name: greet\n    command: echo hi\n' });
  const res = await fetch(`${t.coordinator.apiUrl}/openapi.json`);
  assert.equal(res.status, 200);
  doc = (await res.json()) as typeof doc;
});
after(async () => t.stop());

function operations(): Array<[string, string, Operation]> {
  return Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]): [string, string, Operation] => [method, path, op]));
}

function op(method: string, path: string): Operation {
  const found = doc.paths[path]?.[method];
  assert.ok(found, `${method} ${path}`);
  return found;
}

/** Follows a `#/components/schemas/X` reference. */
function deref(schema: Json): Json {
  const ref = schema.$ref;
  if (typeof ref !== 'string') return schema;
  const target = doc.components.schemas[ref.replace('#/components/schemas/', '')];
  assert.ok(target, ref);
  return target;
}

describe('the OpenAPI document', () => {
  test('every operation declares a typed success body: an object with its properties, or text', () => {
    const ops = operations();
    assert.ok(ops.length >= 44, `${ops.length} operations`);
    for (const [method, path, operation] of ops) {
      const [status, success] = Object.entries(operation.responses).find(([code]) => code.startsWith('2') || code.startsWith('3')) ?? [];
      assert.ok(status !== undefined && success !== undefined, `${method} ${path}: no success response`);
      if (status === '204') continue;
      // A redirect (single sign-on's start) has no body, and says where it goes.
      if (status.startsWith('3')) {
        assert.ok(success.content === undefined && success.headers?.Location !== undefined, `${method} ${path}: a redirect without Location`);
        continue;
      }
      const [mediaType, media] = Object.entries(success.content ?? {})[0] ?? [];
      assert.ok(media !== undefined, `${method} ${path}: no success content`);
      const schema = deref(media.schema);
      if (mediaType === 'application/json') assert.ok(schema.type === 'object' && schema.properties !== undefined, `${method} ${path}: untyped ${JSON.stringify(schema)}`);
      else assert.equal(schema.type, 'string', `${method} ${path}`);
    }
  });

  test('a body is marked required only where an empty one is refused', () => {
    const required = (method: string, path: string) => op(method, path).requestBody?.required;
    assert.equal(required('post', '/dags/{fileName}/start'), false);
    assert.equal(required('post', '/dags/{fileName}/enqueue'), false);
    assert.equal(required('post', '/dag-runs/{name}/{dagRunId}/retry'), false);
    assert.equal(required('post', '/dags/{fileName}/start-sync'), true, 'timeout is required');
    assert.equal(required('post', '/dag-runs'), true, 'spec is required');
    assert.equal(required('post', '/dags'), true, 'name is required');
    assert.equal(required('post', '/services/scheduler/pause'), true);
  });

  test('start with no body at all works, as the document says', async () => {
    const res = await fetch(`${t.coordinator.apiUrl}/dags/hello/start`, { method: 'POST' });
    assert.equal(res.status, 200);
    assert.equal(typeof ((await res.json()) as Json).dagRunId, 'string');
  });

  test('start-sync is deprecated; its 408 and the 503 of /health have their own bodies', () => {
    const sync = op('post', '/dags/{fileName}/start-sync');
    assert.equal(sync.deprecated, true);
    assert.equal(op('post', '/dags/{fileName}/start').deprecated, undefined);
    const timeout = sync.responses['408']?.content?.['application/json']?.schema ?? {};
    assert.deepEqual((timeout.required as string[]).sort(), ['code', 'dagRunId', 'message']);
    const unhealthy = deref(op('get', '/health').responses['503']?.content?.['application/json']?.schema ?? {});
    assert.deepEqual((unhealthy.required as string[]).sort(), ['error', 'status', 'timestamp', 'uptime', 'version']);
  });

  test('remoteNode (only "local") is documented on the operations that take it, profileName in every start body', () => {
    for (const [method, path] of [['get', '/dags'], ['get', '/dag-runs'], ['post', '/dag-runs'], ['post', '/dag-runs/enqueue'], ['get', '/dag-runs/{name}/{dagRunId}/log'], ['get', '/dag-runs/{name}/{dagRunId}/outputs'], ['get', '/workers']] as const) {
      const remote = op(method, path).parameters.find((p) => p.name === 'remoteNode') as { in: string; required: boolean; schema: Json } | undefined;
      assert.ok(remote, `${method} ${path}`);
      assert.deepEqual([remote.in, remote.required, remote.schema.enum], ['query', false, ['local']]);
    }
    for (const path of ['/dags/{fileName}/start', '/dags/{fileName}/start-sync', '/dags/{fileName}/enqueue', '/dag-runs', '/dag-runs/enqueue']) {
      const body = op('post', path).requestBody?.content['application/json']?.schema.properties as Record<string, Json>;
      assert.match(String(body.profileName?.description), /Runtime profile to run with/, path);
    }
  });
});

/** A small client program: run details and lists, through the generated types only. */
const PROGRAM = `import type { components, paths } from './trellis-api.js';

type Json<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { responses: { 200: { content: { 'application/json': infer B } } } } ? B : never;
type RunDetails = Json<'/dag-runs/{name}/{dagRunId}', 'get'>;
type RunList = Json<'/dag-runs', 'get'>;
type DagList = Json<'/dags', 'get'>;

export function describeRun(details: RunDetails): string {
  const run: components['schemas']['DagRunDetails'] = details.dagRun;
  const steps: string[] = run.nodes.map((node) => node.step.name + '=' + node.statusLabel + ' after ' + String(node.retryCount) + ' retries');
  const waiting: string[] = (run.conditions ?? []).map((c) => c.reason);
  return run.name + '/' + run.dagRunId + ' ' + String(run.status) + ' ' + steps.join(',') + waiting.join(',');
}

export function idsOf(list: RunList): { ids: string[]; next: string | undefined } {
  return { ids: list.dagRuns.map((run) => run.dagRunId + ':' + run.statusLabel), next: list.nextCursor };
}

export function namesOf(list: DagList): string[] {
  const pages: number = list.pagination.totalPages;
  return list.dags.map((item) => item.fileName + ' ' + item.dag.name + ' ' + String(item.latestDAGRun?.status ?? -1) + ' ' + String(pages));
}

type StartBody = NonNullable<paths['/dags/{fileName}/start']['post']['requestBody']>['content']['application/json'];
export const startNothing: paths['/dags/{fileName}/start']['post']['requestBody'] = undefined;
export const startWith: StartBody = { params: '{}', singleton: true };

// The types are real, not any: each line below must be an error.
// @ts-expect-error a summary in a list has no nodes
export const noNodes = (list: RunList) => list.dagRuns[0]?.nodes;
// @ts-expect-error status is a number
export const notText = (details: RunDetails): string => details.dagRun.status;
// @ts-expect-error start-sync needs a body with timeout
export const syncWithout: paths['/dags/{fileName}/start-sync']['post']['requestBody'] = undefined;
`;

describe('a TypeScript client generated from the served document', () => {
  test('openapi-typescript output and a program using run details and lists type-check under --strict', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trellis-client-'));
    try {
      const source = astToString(await openapiTS(doc as unknown as OpenAPI3));
      writeFileSync(join(dir, 'trellis-api.ts'), source);
      writeFileSync(join(dir, 'program.ts'), PROGRAM);
      const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
      const args = ['--strict', '--noEmit', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', join(dir, 'program.ts')];
      const result = spawnSync(process.execPath, [tsc, ...args], { cwd: dir, encoding: 'utf8' });
      assert.equal(result.status, 0, `tsc failed:\n${result.stdout}${result.stderr}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
