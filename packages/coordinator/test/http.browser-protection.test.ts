// A web page the operator visits must not drive the API, even with auth off on loopback: raw
// HTTP requests with the headers a browser would send (Host after DNS rebinding, a foreign
// Origin, text/plain and form bodies that need no CORS preflight).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';

let t: TestCoordinator;
let port: number;
let base: string;

before(async () => {
  t = await startTestCoordinator('http_browser', { hello: 'steps:\n  - echo hi\n' }, { allowedHosts: ['trellis.internal'], allowedOrigins: ['https://ui.example.com'] });
  const url = new URL(t.coordinator.apiUrl);
  port = Number(url.port);
  base = url.pathname;
});
after(async () => t.stop());

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

/** One request with exactly these headers (fetch would set Host and Origin itself). */
function send(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path: base + path, headers: { ...headers, ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function runCount(): Promise<number> {
  return ((await t.call('GET', '/dag-runs?name=hello')).json.dagRuns as unknown[]).length;
}

describe('browser protection', () => {
  test('a Host that is not one of the service names is refused (DNS rebinding), for reads too', async () => {
    const rebound = await send('GET', '/dags', { host: 'attacker.example:8080' });
    assert.equal(rebound.status, 403);
    assert.equal(rebound.body.code, 'forbidden');
    assert.match(String(rebound.body.message), /allowedHosts/);
    assert.equal((await send('POST', '/dags/hello/start', { host: 'attacker.example', 'content-type': 'application/json' }, '{}')).status, 403);
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, 'trellis.internal', 'TRELLIS.INTERNAL:80', '10.1.2.3:8080']) {
      assert.equal((await send('GET', '/dags', { host })).status, 200, host);
    }
  });

  test('state-changing bodies that are not JSON are refused before they start anything', async () => {
    const before = await runCount();
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const res = await send('POST', '/dags/hello/start', { host: `127.0.0.1:${port}`, 'content-type': contentType }, '{"dagRunId":"sneaky"}');
      assert.equal(res.status, 400, contentType);
      assert.equal(res.body.code, 'bad_request');
      assert.match(String(res.body.message), /JSON/);
    }
    assert.equal((await send('POST', '/dags/hello/start', { host: `127.0.0.1:${port}` }, '{"dagRunId":"untyped"}')).status, 400, 'a body without a content type');
    assert.equal((await send('PUT', '/dags/hello/spec', { host: `127.0.0.1:${port}`, 'content-type': 'text/plain' }, '{"spec":"steps: []"}')).status, 400);
    assert.equal(await runCount(), before);
  });

  test('JSON bodies and bodiless requests go through', async () => {
    const json = await send('POST', '/dags/hello/start', { host: `127.0.0.1:${port}`, 'content-type': 'application/json; charset=utf-8' }, '{"dagRunId":"json-ok"}');
    assert.deepEqual([json.status, json.body.dagRunId], [200, 'json-ok']);
    const bodiless = await send('POST', '/dags/hello/start', { host: `127.0.0.1:${port}` });
    assert.equal(bodiless.status, 200);
    assert.equal((await send('POST', '/dags/hello/start', { host: `127.0.0.1:${port}`, 'content-length': '0' })).status, 200);
    await t.waitForRunStatus('hello', 'json-ok', [4]);
  });

  test('a foreign Origin cannot change state; the own origin and configured ones can; reads are not checked', async () => {
    const headers = { host: `127.0.0.1:${port}`, 'content-type': 'application/json' };
    const foreign = await send('POST', '/dags/hello/start', { ...headers, origin: 'https://evil.example' }, '{}');
    assert.deepEqual([foreign.status, foreign.body.code], [403, 'forbidden']);
    assert.match(String(foreign.body.message), /allowedOrigins/);
    assert.equal((await send('DELETE', '/dags/hello', { ...headers, origin: 'null' })).status, 403, 'opaque origins (sandboxed frames, files)');
    assert.equal((await send('POST', '/dags/hello/start', { ...headers, origin: `http://localhost:${port}` }, '{}')).status, 403, 'another loopback name is another origin');
    assert.equal((await send('POST', '/dags/hello/start', { ...headers, origin: `http://127.0.0.1:${port}` }, '{}')).status, 200);
    assert.equal((await send('POST', '/dags/hello/start', { ...headers, origin: 'https://ui.example.com/' }, '{}')).status, 200);
    assert.equal((await send('GET', '/dags', { host: headers.host, origin: 'https://evil.example' })).status, 200);
  });

  test('what a browser marks cross-site is refused whatever the method (the contract has a state-changing GET: dequeue)', async () => {
    const host = `127.0.0.1:${port}`;
    await send('POST', '/dags/hello/enqueue', { host, 'content-type': 'application/json' }, '{"dagRunId":"queued-for-img"}');
    // An <img src> on another site: a GET with no Origin, marked cross-site.
    const img = await send('GET', '/dag-runs/hello/queued-for-img/dequeue', { host, 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors' });
    assert.deepEqual([img.status, img.body.code], [403, 'forbidden']);
    assert.match(String(img.body.message), /cross-site/);
    assert.equal((await send('GET', '/dags', { host, 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' })).status, 403);
    assert.equal((await send('GET', '/dags', { host, 'sec-fetch-site': 'cross-site', origin: 'https://ui.example.com' })).status, 200, 'a configured origin may');
    assert.equal((await send('GET', '/dags', { host, 'sec-fetch-site': 'same-origin' })).status, 200);
  });
});
