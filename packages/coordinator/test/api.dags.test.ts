import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';

let t: TestCoordinator;
let dir: string;
const call = (method: string, path: string, body?: unknown) => t.call(method, path, body);

// Daily schedules a fixed time from now, so their order by next run never depends on when the test runs.
const hoursFromNow = (hours: number): number => (new Date().getHours() + hours) % 24;

before(async () => {
  // A definition that does not parse, put in the directory by hand: stored anyway, listed with its errors.
  t = await startTestCoordinator('api_dags', { broken: 'steps: 5\n' });
  dir = t.dir;
  await call('POST', '/dags', { name: 'alpha', spec: `description: first\nlabels: [team=a, nightly]\nschedule: "0 ${hoursFromNow(4)} * * *"\nparams: "X=1"\nsteps:\n  - echo a\n` });
  await call('POST', '/dags', { name: 'beta', spec: `labels: [team=b]\nschedule: "0 ${hoursFromNow(2)} * * *"\nsteps:\n  - echo b\n---\nname: helper\nsteps: [echo h]\n` });
});

after(async () => t.stop());

describe('DAG definitions API', () => {
  test('GET /health', async () => {
    const res = await call('GET', '/health');
    assert.equal(res.status, 200);
    assert.equal(res.json.status, 'healthy');
    assert.equal(typeof res.json.uptime, 'number');
  });

  test('list: paging, default sort by name, invalid definitions listed with their errors', async () => {
    const res = await call('GET', '/dags?perPage=2');
    assert.equal(res.status, 200);
    const dags = res.json.dags as Array<{ fileName: string; errors: string[]; nextRun: string }>;
    assert.deepEqual(dags.map((d) => d.fileName), ['alpha', 'beta']);
    assert.deepEqual(res.json.pagination, { totalRecords: 3, currentPage: 1, totalPages: 2, nextPage: 2, prevPage: null });
    const page2 = await call('GET', '/dags?perPage=2&page=2');
    const broken = (page2.json.dags as typeof dags)[0];
    assert.equal(broken?.fileName, 'broken');
    assert.deepEqual(broken?.errors, ['steps: must be a list of steps, got a number']);
  });

  test('list: name and label filters, nextRun sort and order', async () => {
    const byName = await call('GET', '/dags?name=ALP');
    assert.deepEqual((byName.json.dags as Array<{ fileName: string }>).map((d) => d.fileName), ['alpha']);
    const byLabel = await call('GET', '/dags?labels=team=b');
    assert.deepEqual((byLabel.json.dags as Array<{ fileName: string }>).map((d) => d.fileName), ['beta']);
    const byNext = await call('GET', '/dags?sort=nextRun');
    assert.deepEqual((byNext.json.dags as Array<{ fileName: string }>).map((d) => d.fileName), ['beta', 'alpha', 'broken']);
    const desc = await call('GET', '/dags?sort=name&order=desc');
    assert.deepEqual((desc.json.dags as Array<{ fileName: string }>).map((d) => d.fileName), ['broken', 'beta', 'alpha']);
  });

  test('list: a page read again shows what changed since: a run, a suspension, a definition, the total, a deletion', async () => {
    type Item = { fileName: string; dag: { description: string }; nextRun: string; latestDAGRun: { dagRunId: string; status: number } | null; suspended: boolean };
    const read = async (): Promise<{ dags: Item[]; pagination: { totalRecords: number } }> => (await call('GET', '/dags?name=gamma&perPage=1')).json as never;
    const listed = async (): Promise<Item[]> => (await read()).dags;
    await call('POST', '/dags', { name: 'gamma', spec: 'description: g1\nschedule: "0 3 * * *"\nsteps:\n  - sleep 30\n' });
    const first = await read();
    assert.deepEqual(await read(), first, 'read again unchanged');
    assert.deepEqual(first.dags.map((d) => [d.dag.description, d.latestDAGRun, d.suspended, d.nextRun !== '']), [['g1', null, false, true]]);
    const id = (await call('POST', '/dags/gamma/start', {})).json.dagRunId as string;
    await t.waitForRunStatus('gamma', id, [1]);
    assert.deepEqual((await listed()).map((d) => [d.latestDAGRun?.dagRunId, d.latestDAGRun?.status]), [[id, 1]], 'a new run');
    await call('POST', `/dag-runs/gamma/${id}/stop`);
    await t.waitForRunStatus('gamma', id, [3]);
    assert.deepEqual((await listed()).map((d) => d.latestDAGRun?.status), [3], 'the run, moved on');
    await call('POST', '/dags/gamma/suspend', { suspend: true });
    assert.deepEqual((await listed()).map((d) => [d.suspended, d.nextRun]), [[true, '']], 'a suspension, and no next run');
    await call('PUT', '/dags/gamma/spec', { spec: 'description: g2\nsteps:\n  - echo g\n' });
    assert.deepEqual((await listed()).map((d) => d.dag.description), ['g2'], 'a changed definition');
    await call('POST', '/dags', { name: 'gamma2' });
    const grown = await read();
    assert.deepEqual([grown.dags.map((d) => d.fileName), grown.pagination.totalRecords], [['gamma'], 2], 'the same first item, another total');
    assert.equal((await call('DELETE', '/dags/gamma')).status, 204);
    assert.equal((await call('DELETE', '/dags/gamma2')).status, 204);
    assert.deepEqual(await listed(), [], 'deleted ones');
  });

  test('list limits: perPage 1-1000, page >= 1', async () => {
    assert.equal((await call('GET', '/dags?perPage=1001')).status, 400);
    assert.equal((await call('GET', '/dags?perPage=0')).status, 400);
    assert.equal((await call('GET', '/dags?page=0')).status, 400);
    assert.equal((await call('GET', '/dags?sort=size')).status, 400);
    assert.equal((await call('GET', '/dags?perPage=1000')).status, 200);
  });

  test('detail with local DAGs; 404 and bad names', async () => {
    const res = await call('GET', '/dags/beta');
    assert.equal(res.status, 200);
    const localDags = res.json.localDags as Array<{ name: string; errors: string[] }>;
    assert.deepEqual(localDags.map((l) => [l.name, l.errors]), [['helper', []]]);
    assert.equal((res.json.dag as { name: string }).name, 'beta');
    assert.equal(res.json.suspended, false);
    const missing = await call('GET', '/dags/missing');
    assert.deepEqual([missing.status, missing.json.code, missing.json.message], [404, 'not_found', 'DAG not found']);
    const bad = await call('GET', '/dags/bad.name');
    assert.deepEqual([bad.status, bad.json.code], [400, 'bad_request']);
  });

  test('create: minimal DAG without spec, 409 when it exists, 400 for a bad name or spec', async () => {
    const created = await call('POST', '/dags', { name: 'fresh' });
    assert.deepEqual([created.status, created.json], [201, { name: 'fresh' }]);
    const detail = await call('GET', '/dags/fresh');
    assert.equal(((detail.json.dag as { steps: unknown[] }).steps).length, 1);
    assert.equal((await call('POST', '/dags', { name: 'fresh' })).json.code, 'already_exists');
    assert.equal((await call('POST', '/dags', { name: 'fresh' })).status, 409);
    assert.deepEqual((await call('POST', '/dags', { name: 'no/slash' })).json.message, 'Invalid DAG name format');
    const badSpec = await call('POST', '/dags', { name: 'badspec', spec: 'steps: []' });
    assert.equal(badSpec.status, 400);
    assert.deepEqual((badSpec.json.details as { errors: string[] }).errors, ['steps: at least one step is required']);
    assert.equal((await call('POST', '/dags', {})).status, 400);
    assert.equal((await call('POST', '/dags', '{"name": ')).json.code, 'bad_request');
  });

  test('spec: get, put valid, put invalid is reported in a 200 and not stored', async () => {
    const got = await call('GET', '/dags/alpha/spec');
    assert.match(String(got.json.spec), /description: first/);
    const bad = await call('PUT', '/dags/alpha/spec', { spec: 'steps:\n  - {name: a, command: x, depends: ghost}\n' });
    assert.equal(bad.status, 200);
    assert.deepEqual(bad.json.errors, ['steps[0].depends: not allowed when type is chain (use type: graph)']);
    assert.match(String((await call('GET', '/dags/alpha/spec')).json.spec), /description: first/);
    const good = await call('PUT', '/dags/alpha/spec', { spec: 'description: second\nsteps:\n  - echo a2\n' });
    assert.deepEqual([good.status, good.json.errors], [200, []]);
    assert.equal(((await call('GET', '/dags/alpha')).json.dag as { description: string }).description, 'second');
    assert.equal((await call('PUT', '/dags/missing/spec', { spec: 'steps: [echo]' })).status, 404);
    assert.equal((await call('PUT', '/dags/alpha/spec', {})).status, 400);
  });

  test('validate is always 200', async () => {
    const ok = await call('POST', '/dags/validate', { spec: 'steps: [echo hi]', name: 'x' });
    assert.deepEqual([ok.status, ok.json.valid, ok.json.errors], [200, true, []]);
    assert.equal((ok.json.dag as { name: string }).name, 'x');
    const bad = await call('POST', '/dags/validate', { spec: 'steps: [' });
    assert.equal(bad.status, 200);
    assert.equal(bad.json.valid, false);
    assert.match((bad.json.errors as string[])[0] ?? '', /invalid YAML/);
  });

  test('rename: 200, 400 bad name, 404 missing, 409 taken', async () => {
    await call('POST', '/dags', { name: 'to-rename' });
    assert.equal((await call('POST', '/dags/to-rename/rename', { newFileName: 'bad name' })).json.message, 'Invalid new file name format');
    assert.equal((await call('POST', '/dags/to-rename/rename', { newFileName: 'beta' })).status, 409);
    assert.equal((await call('POST', '/dags/missing/rename', { newFileName: 'x' })).status, 404);
    const ok = await call('POST', '/dags/to-rename/rename', { newFileName: 'renamed' });
    assert.equal(ok.status, 200);
    assert.equal((await call('GET', '/dags/renamed')).status, 200);
    assert.equal((await call('GET', '/dags/to-rename')).status, 404);
  });

  test('delete: 204 then 404; the file is gone', async () => {
    await call('POST', '/dags', { name: 'doomed' });
    assert.equal((await call('DELETE', '/dags/doomed')).status, 204);
    // The directory is a mirror the coordinator writes after the database change.
    for (let waited = 0; existsSync(join(dir, 'dags', 'doomed.yaml')) && waited < 5000; waited += 20) await new Promise((r) => setTimeout(r, 20));
    assert.equal(existsSync(join(dir, 'dags', 'doomed.yaml')), false);
    assert.equal((await call('DELETE', '/dags/doomed')).status, 404);
  });

  test('search finds lines; q is required', async () => {
    const res = await call('GET', '/dags/search?q=echo%20b');
    const results = res.json.results as Array<{ fileName: string; matches: Array<{ lineNumber: number }> }>;
    assert.deepEqual(results.map((r) => r.fileName), ['beta']);
    assert.equal(results[0]?.matches[0]?.lineNumber, 4);
    assert.equal((await call('GET', '/dags/search')).status, 400);
  });

  test('the OpenAPI document lists every served route', async () => {
    const res = await call('GET', '/openapi.json');
    const paths = Object.keys(res.json.paths as object);
    for (const path of ['/dags', '/dags/search', '/dags/validate', '/dags/{fileName}', '/dags/{fileName}/rename', '/dags/{fileName}/spec', '/dags/{fileName}/start', '/dag-runs', '/dag-runs/{name}/{dagRunId}/log', '/health', '/openapi.json']) {
      assert.ok(paths.includes(path), path);
    }
  });
});
