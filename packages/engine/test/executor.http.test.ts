import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { loadDag } from '@trellis/core';
import { httpExecutor } from '../src/executors/http.js';
import type { StepExecutionContext } from '../src/executors/types.js';

interface Run {
  ctx: StepExecutionContext;
  stdout: () => string;
  stderr: () => string;
}

function collector(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

/** A context for one http step, the step parsed from YAML as a user would write it. */
/**
 * The step as the executor sees it once `${...}` references are expanded: validation takes a
 * reference on trust, so the executor checks the expanded command and config again.
 */
function httpStep(command: string, config: Record<string, unknown> = {}, signal = new AbortController().signal): Run {
  const loaded = loadDag(JSON.stringify({ steps: [{ name: 'call', type: 'http', command: '${REQUEST}' }] }));
  const parsed = loaded.dag?.steps[0];
  assert.ok(parsed, loaded.errors.join('; '));
  const step = { ...parsed, commands: [command], config };
  const out = collector();
  const err = collector();
  const ctx: StepExecutionContext = { step, env: {}, workingDir: tmpdir(), shell: ['sh'], stdout: out.stream, stderr: err.stream, signal, stopSignal: 'SIGTERM', killAfterMs: 1000 };
  return { ctx, stdout: out.text, stderr: err.text };
}

/** Answers /echo with what it received; /missing with 404; /slow never answers; /moved redirects to /echo. */
function handler(arrived: (path: string) => void) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    arrived(url.pathname);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (url.pathname === '/slow') return;
      if (url.pathname === '/moved') return void res.writeHead(302, { location: '/echo?from=moved' }).end();
      if (url.pathname === '/missing') return void res.writeHead(404, { 'content-type': 'text/plain' }).end('nothing here');
      const echo = { method: req.method, query: Object.fromEntries(url.searchParams), headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      res.writeHead(200, { 'content-type': 'application/json', 'x-trellis': 'yes' }).end(JSON.stringify(echo));
    });
  };
}

function listen(server: Server): Promise<string> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(String((server.address() as AddressInfo).port))));
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

describe('http executor', () => {
  let base = '';
  let secureBase = '';
  let certDir = '';
  let onArrival: (path: string) => void = () => undefined;
  const plain = createHttpServer(handler((path) => onArrival(path)));
  let secure: Server | undefined;

  before(async () => {
    base = `http://127.0.0.1:${await listen(plain)}`;
    certDir = mkdtempSync(join(tmpdir(), 'trellis-http-'));
    const key = join(certDir, 'key.pem');
    const cert = join(certDir, 'cert.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=localhost'], { stdio: 'ignore' });
    secure = createHttpsServer({ key: readFileSync(key), cert: readFileSync(cert) }, handler(() => undefined));
    secureBase = `https://127.0.0.1:${await listen(secure)}`;
  });

  after(async () => {
    await close(plain);
    if (secure !== undefined) await close(secure);
    rmSync(certDir, { recursive: true, force: true });
  });

  test('sends method, headers, query and an object body as JSON; silent writes the body only', async () => {
    const run = httpStep(`post ${base}/echo?keep=1`, { headers: { 'X-Token': 'abc', 'X-Count': 3 }, query: { q: 'a b', n: 2 }, body: { name: 'trellis', tags: ['x'] }, silent: true });
    const result = await httpExecutor.run(run.ctx);
    assert.deepEqual(result, { exitCode: 0 });
    const echo = JSON.parse(run.stdout()) as { method: string; query: Record<string, string>; headers: Record<string, string>; body: string };
    assert.equal(echo.method, 'POST');
    assert.deepEqual(echo.query, { keep: '1', q: 'a b', n: '2' });
    assert.equal(echo.headers['x-token'], 'abc');
    assert.equal(echo.headers['x-count'], '3');
    assert.equal(echo.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(echo.body), { name: 'trellis', tags: ['x'] });
    assert.match(run.stderr(), new RegExp(`POST ${base}/echo`));
  });

  test('a string body is sent as written, with the step content type', async () => {
    const run = httpStep(`PUT ${base}/echo`, { headers: { 'Content-Type': 'text/csv' }, body: 'a,b\n1,2', silent: 'true' });
    assert.equal((await httpExecutor.run(run.ctx)).exitCode, 0);
    const echo = JSON.parse(run.stdout()) as { method: string; headers: Record<string, string>; body: string };
    assert.equal(echo.method, 'PUT');
    assert.equal(echo.headers['content-type'], 'text/csv');
    assert.equal(echo.body, 'a,b\n1,2');
  });

  test('without silent, the status line and headers come before the body', async () => {
    const run = httpStep(`GET ${base}/echo`);
    assert.equal((await httpExecutor.run(run.ctx)).exitCode, 0);
    const [head = '', body = ''] = run.stdout().split('\n\n');
    const lines = head.split('\n');
    assert.equal(lines[0], 'HTTP 200 OK');
    assert.ok(lines.includes('content-type: application/json'));
    assert.ok(lines.includes('x-trellis: yes'));
    assert.equal((JSON.parse(body) as { method: string }).method, 'GET');
  });

  test('follows redirects', async () => {
    const run = httpStep(`GET ${base}/moved`, { silent: true });
    assert.equal((await httpExecutor.run(run.ctx)).exitCode, 0);
    assert.deepEqual((JSON.parse(run.stdout()) as { query: unknown }).query, { from: 'moved' });
  });

  test('a non-2xx response fails the step and names the status; its body is still logged', async () => {
    const run = httpStep(`GET ${base}/missing`, { silent: true });
    const result = await httpExecutor.run(run.ctx);
    assert.deepEqual(result, { exitCode: 1, error: 'HTTP 404 Not Found' });
    assert.equal(run.stdout(), 'nothing here');
    assert.match(run.stderr(), /HTTP 404 Not Found/);
  });

  test('config timeout fails a request that does not answer in time', async () => {
    const run = httpStep(`GET ${base}/slow`, { timeout: 0.3 });
    const result = await httpExecutor.run(run.ctx);
    assert.equal(result.exitCode, 1);
    assert.equal(result.error, 'request timed out after 0.3 s');
    assert.equal(result.stopped, undefined);
  });

  test('an aborted signal stops the request', async () => {
    const controller = new AbortController();
    onArrival = (path) => {
      if (path === '/slow') controller.abort({ kind: 'stop' });
    };
    const run = httpStep(`GET ${base}/slow`, {}, controller.signal);
    const result = await httpExecutor.run(run.ctx);
    onArrival = () => undefined;
    assert.equal(result.stopped, true);
    assert.equal(result.exitCode, 1);
  });

  test('network errors, bad URLs, bad commands and bad config fail with a clear error', async () => {
    const refused = createHttpServer();
    const port = await listen(refused);
    await close(refused);
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      [`GET http://127.0.0.1:${port}/`, {}, /^request failed: .*ECONNREFUSED/],
      ['GET not-a-url', {}, /^invalid URL "not-a-url"$/],
      ['GET ftp://example.com/x', {}, /unsupported URL scheme "ftp:"/],
      [`${base}/echo`, {}, /must be "METHOD url"/],
      [`GET ${base}/echo`, { timeout: 'soon' }, /^invalid http config: timeout/],
    ];
    for (const [command, config, expected] of cases) {
      const run = httpStep(command, config);
      const result = await httpExecutor.run(run.ctx);
      assert.equal(result.exitCode, 1, command);
      assert.match(result.error ?? '', expected, command);
      assert.ok(run.stderr().includes(result.error ?? '-'), command);
    }
  });

  test('https with a self-signed certificate fails unless tls_skip_verify is set', async () => {
    const strict = httpStep(`GET ${secureBase}/echo`, { silent: true });
    const refused = await httpExecutor.run(strict.ctx);
    assert.equal(refused.exitCode, 1);
    assert.match(refused.error ?? '', /certificate/i);

    const relaxed = httpStep(`GET ${secureBase}/echo`, { silent: true, tls_skip_verify: true });
    assert.deepEqual(await httpExecutor.run(relaxed.ctx), { exitCode: 0 });
    assert.equal((JSON.parse(relaxed.stdout()) as { method: string }).method, 'GET');
  });
});
