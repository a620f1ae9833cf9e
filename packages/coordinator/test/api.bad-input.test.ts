import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join, relative } from 'node:path';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';

let t: TestCoordinator;
type Json = Record<string, unknown>;

const DAGS = {
  hello: 'steps:\n  - name: s1\n    command: "true"\n',
  // Put in the DAGs directory by hand: imported at start, stored even where they cannot run.
  nul: 'steps:\n  - echo "a\u0000b"\n',
  escaped: 'steps:\n  - "echo \\0"\n',
  dots: 'name: ..\nsteps:\n  - name: ..\n    command: echo from-dots\n',
};

before(async () => {
  t = await startTestCoordinator('api_bad_input', DAGS);
});
after(async () => t.stop());

async function raw(method: string, path: string, init: { headers?: Record<string, string>; body?: string } = {}): Promise<{ status: number; json: Json }> {
  const res = await fetch(t.coordinator.apiUrl + path, { method, headers: { 'content-type': 'application/json', ...init.headers }, ...(init.body !== undefined ? { body: init.body } : {}) });
  const text = await res.text();
  return { status: res.status, json: JSON.parse(text) as Json };
}

function assertBadRequest(res: { status: number; json: Json }, message?: RegExp): void {
  assert.equal(res.status, 400, JSON.stringify(res.json));
  assert.equal(res.json.code, 'bad_request');
  if (message !== undefined) assert.match(String(res.json.message), message);
}

/** Polls a run by list query: a DAG or run named ".." cannot be addressed in a URL path. */
async function finished(name: string, id: string): Promise<Json> {
  for (let i = 0; i < 200; i += 1) {
    const runs = (await t.call('GET', `/dag-runs?name=${encodeURIComponent(name)}&dagRunId=${encodeURIComponent(id)}`)).json.dagRuns as Json[];
    const run = runs.find((r) => r.name === name && r.dagRunId === id);
    if (run !== undefined && [2, 3, 4].includes(run.status as number)) return run;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`run ${name}/${id} did not finish`);
}

describe('bad input is a 400 with the contract body, never a 500', () => {
  test('a malformed percent escape in a path segment', async () => {
    assertBadRequest(await raw('GET', '/dags/%zz'), /percent-encoding/);
    assertBadRequest(await raw('GET', '/dag-runs/hello/%E0%A4%A'), /percent-encoding/);
  });

  test('a Content-Encoding the body does not have', async () => {
    for (const encoding of ['gzip', 'deflate', 'br']) {
      assertBadRequest(await raw('POST', '/dags/validate', { headers: { 'content-encoding': encoding }, body: '{"spec":"steps: [x]"}' }), /Content-Encoding/);
    }
  });

  test('a NUL character in a run id, a query filter, a pause reason or a spec names the field', async () => {
    assertBadRequest(await raw('GET', '/dag-runs/hello/a%00b'), /path\.dagRunId: must not contain a NUL/);
    assertBadRequest(await raw('GET', '/dag-runs?dagRunId=a%00b'), /query\.dagRunId: must not contain a NUL/);
    assertBadRequest(await raw('GET', '/event-logs?dagName=a%00b'), /query\.dagName/);
    assertBadRequest(await t.call('POST', '/services/scheduler/pause', { paused: true, reason: 'x\u0000y' }), /body\.reason/);
    assertBadRequest(await t.call('POST', '/dag-runs', { spec: 'steps:\n  - echo \u0000\n' }), /body\.spec/);
    assertBadRequest(await t.call('POST', '/dags/hello/start', { params: '{"a":"\u0000"}' }), /body\.params/);
  });

  test('a spec holding a NUL on disk is invalid, and starting it is a 400 that leaves other DAGs startable', async () => {
    assertBadRequest(await t.call('POST', '/dags/nul/start', {}), /NUL/);
    assertBadRequest(await t.call('POST', '/dags/escaped/start', {}), /NUL/);
    const valid = await t.call('POST', '/dags/validate', { spec: 'steps:\n  - "echo \\0"\n' });
    assert.equal(valid.json.valid, false);
    assert.equal((await t.call('POST', '/dags/hello/start', {})).status, 200);
  });

  test('fromDate and toDate beyond the Date range, startTime far in the past', async () => {
    assertBadRequest(await raw('GET', '/dag-runs?fromDate=99999999999999'), /query\.fromDate/);
    assertBadRequest(await raw('GET', '/dag-runs/hello?toDate=-99999999999999'), /query\.toDate/);
    assertBadRequest(await raw('GET', `/event-logs?startTime=${encodeURIComponent('-271821-04-20T00:00:00Z')}`), /query\.startTime/);
    assertBadRequest(await raw('GET', `/event-logs?endTime=${encodeURIComponent('+275760-09-13T00:00:00Z')}`), /query\.endTime/);
    assert.equal((await raw('GET', '/dag-runs?fromDate=0&toDate=253402300799')).status, 200);
    assert.equal((await raw('GET', '/event-logs?startTime=0001-01-01T00:00:00Z')).status, 200);
  });

  test('a rename or create with a 300-character name', async () => {
    const long = 'n'.repeat(300);
    assertBadRequest(await t.call('POST', '/dags/hello/rename', { newFileName: long }), /Invalid new file name format/);
    assertBadRequest(await t.call('POST', '/dags', { name: long }), /Invalid DAG name format/);
    assert.equal((await t.call('GET', '/dags/hello')).status, 200);
  });

  test('a Last-Event-ID beyond any event id', async () => {
    assertBadRequest(await raw('GET', '/events/dag-runs', { headers: { 'last-event-id': '99999999999999999999999' } }), /Last-Event-ID/);
    assertBadRequest(await raw('GET', '/events/dag-runs/hello/x', { headers: { 'last-event-id': '9'.repeat(400) } }), /Last-Event-ID/);
  });
});

describe('names used in paths stay under the log directory', () => {
  test('an inline run and a DAG named ".." log inside the log directory, each in its own folder', async () => {
    const logDir = join(t.dir, 'data', 'logs');
    const inline = await t.call('POST', '/dag-runs', { spec: 'steps:\n  - name: s1\n    command: "true"\n', name: '..', dagRunId: '..' });
    assert.equal(inline.status, 200, JSON.stringify(inline.json));
    const run = await finished('..', '..');
    const rel = relative(logDir, String(run.log));
    assert.ok(!rel.startsWith('..') && rel.split('/').length === 3, `run log ${String(run.log)} is not <dag>/<run>/run.log under ${logDir}`);
    const started = await t.call('POST', '/dags/dots/start', {});
    assert.equal(started.status, 200, JSON.stringify(started.json));
    const id = started.json.dagRunId as string;
    assert.equal((await finished('..', id)).status, 4);
    const stored = (await t.call('GET', `/dags/dots/dag-runs/${id}`)).json.dagRun as Json;
    const runDir = join(String(stored.log), '..');
    const stdout = String((stored.nodes as Array<{ stdout: string }>)[0]?.stdout);
    assert.equal(relative(runDir, stdout).includes('/'), false, `step log ${stdout} is not a file of the run folder ${runDir}`);
    assert.ok(!relative(runDir, stdout).startsWith('..'));
  });
});
