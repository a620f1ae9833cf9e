import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { NotFoundError } from '@trellis/core';
import { createHttpApp, defineRoute, loadServerConfig, ConfigError } from '@trellis/coordinator';
import { captureLog } from './support/log-capture.js';

const routes = [
  defineRoute({
    method: 'get',
    path: '/things/{id}',
    operationId: 'getThing',
    permission: 'public',
    summary: 'get',
    tag: 'test',
    params: z.object({ id: z.string() }),
    response: z.object({ id: z.string() }),
    handler: ({ params }) => {
      if (params.id === 'missing') throw new NotFoundError('no such thing');
      if (params.id === 'boom') throw new Error('internal detail');
      return Promise.resolve({ id: params.id });
    },
  }),
  defineRoute({
    method: 'post',
    path: '/things',
    operationId: 'createThing',
    permission: 'public',
    summary: 'create',
    tag: 'test',
    body: z.object({ name: z.string() }),
    response: z.object({ name: z.string() }),
    handler: ({ body }) => Promise.resolve({ name: body.name }),
  }),
];

interface App {
  base: string;
  lines: () => Array<Record<string, unknown>>;
  text: () => string;
  close: () => Promise<void>;
}

async function startApp(accessLog?: boolean): Promise<App> {
  const { logger, text, lines } = captureLog();
  const app = createHttpApp({ routes, logger, basePath: '', apiBasePath: '/api/v1', version: '0.0.0-test', ...(accessLog !== undefined ? { accessLog } : {}) });
  const server: Server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`,
    text,
    lines,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The access line is written when the response closes: wait for it. */
async function accessLines(app: App, count: number): Promise<Array<Record<string, unknown>>> {
  for (let i = 0; i < 100; i += 1) {
    const lines = app.lines().filter((l) => l.message === 'http request');
    if (lines.length >= count) return lines;
    await new Promise((r) => setTimeout(r, 10));
  }
  return app.lines().filter((l) => l.message === 'http request');
}

describe('access log', () => {
  let app: App;
  before(async () => (app = await startApp()));
  after(() => app.close());

  test('one info line per request: method, route, status, duration, request id; no credentials', async () => {
    const secret = 'svc_abcdef0123456789';
    const res = await fetch(`${app.base}/things/abc?token=${secret}`, { headers: { authorization: `Bearer ${secret}`, 'x-request-id': 'req-1' } });
    assert.equal(res.status, 200);
    const created = await fetch(`${app.base}/things`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Basic ${secret}` }, body: JSON.stringify({ name: secret }) });
    assert.equal(created.status, 200);
    const [get, post] = await accessLines(app, 2);
    assert.equal(get?.level, 'info');
    assert.equal(get?.method, 'GET');
    assert.equal(get?.route, '/things/{id}');
    assert.equal(get?.status, 200);
    assert.equal(get?.requestId, 'req-1');
    assert.equal(typeof get?.durationMs, 'number');
    assert.equal(post?.method, 'POST');
    assert.equal(post?.route, '/things');
    assert.match(String(post?.requestId), /^[0-9a-f-]{36}$/);
    assert.doesNotMatch(app.text(), new RegExp(secret), 'no header, query string or body in the log');
  });

  test('an unmatched path is logged without its query string', async () => {
    const before = (await accessLines(app, 0)).length;
    const res = await fetch(`${app.base}/nowhere/x?token=svc_hidden`);
    assert.equal(res.status, 404);
    const line = (await accessLines(app, before + 1))[before];
    assert.equal(line?.route, '/api/v1/nowhere/x');
    assert.equal(line?.status, 404);
    assert.doesNotMatch(app.text(), /svc_hidden/);
  });

  test('accessLog: false writes no line', async () => {
    const quiet = await startApp(false);
    try {
      assert.equal((await fetch(`${quiet.base}/things/abc`)).status, 200);
      await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(quiet.lines(), []);
    } finally {
      await quiet.close();
    }
  });

  test('SVC_ACCESS_LOG turns it off; a value that is not a boolean is refused', () => {
    assert.equal(loadServerConfig({ env: {} }).accessLog, true);
    assert.equal(loadServerConfig({ env: { SVC_ACCESS_LOG: 'false' } }).accessLog, false);
    assert.equal(loadServerConfig({ env: { SVC_ACCESS_LOG: 'off' } }).accessLog, false);
    assert.throws(() => loadServerConfig({ env: { SVC_ACCESS_LOG: 'maybe' } }), (e: unknown) => e instanceof ConfigError && /SVC_ACCESS_LOG: must be true or false/.test(e.message));
  });
});

describe('request id', () => {
  let app: App;
  before(async () => (app = await startApp()));
  after(() => app.close());

  test("the caller's id is echoed, and error bodies carry it in details", async () => {
    const res = await fetch(`${app.base}/things/missing`, { headers: { 'x-request-id': 'trace-42.a:b_c' } });
    assert.equal(res.status, 404);
    assert.equal(res.headers.get('x-request-id'), 'trace-42.a:b_c');
    assert.deepEqual(await res.json(), { code: 'not_found', message: 'no such thing', details: { requestId: 'trace-42.a:b_c' } });
  });

  test('without one, or with an unsafe one, a fresh id is made and used everywhere', async () => {
    for (const offered of [undefined, 'a'.repeat(129), 'x%0Ay', '<script>', 'id with spaces', '']) {
      const res = await fetch(`${app.base}/things/boom`, { headers: offered !== undefined ? { 'x-request-id': offered } : {} });
      const id = res.headers.get('x-request-id');
      assert.match(String(id), /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, `for ${JSON.stringify(offered)}`);
      const body = (await res.json()) as { code: string; details?: { requestId?: string } };
      assert.equal(body.code, 'internal_error');
      assert.equal(body.details?.requestId, id);
    }
    const logged = app.lines().find((l) => l.message === 'unhandled error while serving a request');
    assert.match(String(logged?.requestId), /^[0-9a-f-]{36}$/, 'the error line carries the id too');
  });

  test('errors raised before any route (a malformed body) carry it as well', async () => {
    const res = await fetch(`${app.base}/things`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': 'bad-body' }, body: '{"name": ' });
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as { details?: { requestId?: string } }).details?.requestId, 'bad-body');
  });
});
