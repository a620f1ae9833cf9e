import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { AlreadyExistsError, TimeoutError } from '@trellis/core';
import { ANONYMOUS, buildOpenApiDocument, createHttpApp, createSilentLogger, defineRoute, JsonText, reply, type AnyRoute } from '@trellis/coordinator';
import { rawHttp } from './support/raw-http.js';

const routes = [
  defineRoute({
    method: 'post',
    path: '/things',
    operationId: 'createThing',
    permission: 'public',
    summary: 'create',
    tag: 'test',
    response: z.object({ name: z.string() }),
    body: z.object({ name: z.string().min(1), size: z.number().int().max(10).optional() }),
    errors: [409],
    handler: ({ body }) => {
      if (body.name === 'taken') throw new AlreadyExistsError('thing exists', { name: body.name });
      return Promise.resolve(reply(201, { name: body.name }));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/things/search',
    operationId: 'searchThings',
    permission: 'public',
    summary: 'search',
    tag: 'test',
    response: z.object({ route: z.string() }),
    handler: () => Promise.resolve({ route: 'search' }),
  }),
  defineRoute({
    method: 'get',
    path: '/things/{id}',
    operationId: 'getThing',
    permission: 'public',
    summary: 'get',
    tag: 'test',
    response: z.object({ id: z.string(), limit: z.number() }),
    params: z.object({ id: z.string().regex(/^[a-z]+$/) }),
    query: z.object({ limit: z.coerce.number().int().min(1).max(500).default(100) }),
    handler: ({ params, query }) => {
      if (params.id === 'boom') throw new Error('secret internal detail');
      if (params.id === 'slow') throw new TimeoutError('gave up waiting', 'run-1');
      return Promise.resolve({ id: params.id, limit: query.limit });
    },
  }),
  defineRoute({
    method: 'get',
    path: '/drifted',
    operationId: 'getDrifted',
    permission: 'public',
    summary: 'answers other than it declares',
    tag: 'test',
    response: z.object({ count: z.number() }),
    handler: () => Promise.resolve({ count: 'three' }),
  }),
  defineRoute({
    method: 'get',
    path: '/words/{form}',
    operationId: 'getWords',
    permission: 'public',
    summary: 'the same answer as JSON text or as a value',
    tag: 'test',
    response: z.object({ words: z.array(z.string()) }),
    params: z.object({ form: z.enum(['text', 'value']) }),
    handler: ({ params }) => Promise.resolve(params.form === 'text' ? new JsonText(JSON.stringify({ words: WORDS })) : { words: WORDS }),
  }),
];

/** Characters of two, three and four UTF-8 bytes: a length counted in characters would cut the body short. */
const WORDS = ['déjà vu', '日本語', 'emoji 🚀'];

let server: Server;
let base: string;

before(async () => {
  const app = createHttpApp({ routes, logger: createSilentLogger(), basePath: '/mnt', apiBasePath: '/api/v1', version: '0.0.0-test', checkResponses: true, authenticate: () => Promise.resolve(ANONYMOUS) });
  server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mnt/api/v1`;
});

after(async () => {
  await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
});

/** One answer as the server wrote it, headers and all (see rawHttp). */
function rawAnswer(method: string, path: string, headers = ''): Promise<string> {
  const url = new URL(base + path);
  return rawHttp(base, `${method} ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nConnection: close\r\n${headers}\r\n`);
}

async function call(method: string, path: string, body?: string): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(base + path, { method, headers: { 'content-type': 'application/json' }, ...(body !== undefined ? { body } : {}) });
  const text = await res.text();
  return { status: res.status, json: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
}

describe('HTTP error mapping', () => {
  test('valid request succeeds with the declared status', async () => {
    const res = await call('POST', '/things', JSON.stringify({ name: 'a' }));
    assert.equal(res.status, 201);
    assert.deepEqual(res.json, { name: 'a' });
  });

  test('malformed JSON is 400 bad_request, not 500', async () => {
    const res = await call('POST', '/things', '{"name": ');
    assert.equal(res.status, 400);
    assert.equal(res.json.code, 'bad_request');
    assert.match(String(res.json.message), /malformed JSON/);
  });

  test('schema violations are 400 bad_request naming the field', async () => {
    const res = await call('POST', '/things', JSON.stringify({ name: '', size: 99 }));
    assert.equal(res.status, 400);
    assert.equal(res.json.code, 'bad_request');
    assert.match(String(res.json.message), /body\.name/);
    assert.match(String(res.json.message), /body\.size/);
  });

  test('query limits and path patterns are validated', async () => {
    assert.equal((await call('GET', '/things/abc?limit=501')).status, 400);
    assert.equal((await call('GET', '/things/ABC')).status, 400);
    const ok = await call('GET', '/things/abc?limit=7');
    assert.deepEqual(ok.json, { id: 'abc', limit: 7 });
  });

  test('static segments win over parameters whatever the declaration order', async () => {
    const res = await call('GET', '/things/search');
    assert.deepEqual(res.json, { route: 'search' });
  });

  test('typed errors keep their code, status and details', async () => {
    const res = await call('POST', '/things', JSON.stringify({ name: 'taken' }));
    assert.equal(res.status, 409);
    assert.deepEqual(res.json, { code: 'already_exists', message: 'thing exists', details: { name: 'taken', requestId: (res.json.details as { requestId?: unknown }).requestId } });
    const slow = await call('GET', '/things/slow');
    assert.equal(slow.status, 408);
    assert.equal(slow.json.dagRunId, 'run-1');
  });

  test('an unexpected error is a 500 internal_error without internals', async () => {
    const res = await call('GET', '/things/boom');
    assert.equal(res.status, 500);
    assert.equal(res.json.code, 'internal_error');
    assert.doesNotMatch(JSON.stringify(res.json), /secret internal detail|at /);
  });

  test('JSON answers carry their type and their length in bytes, and HEAD the same headers without a body', async () => {
    for (const form of ['text', 'value']) {
      const res = await fetch(`${base}/words/${form}`);
      const bytes = Buffer.from(await res.arrayBuffer());
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
      assert.equal(res.headers.get('content-length'), String(bytes.length));
      assert.deepEqual(JSON.parse(bytes.toString('utf8')), { words: WORDS });
      // No answer carries a validator, so none is "not modified": `If-None-Match: *` made express answer 304.
      // (A raw request: fetch adds `Cache-Control: no-cache` to a conditional one, which express heeds.)
      assert.match(await rawAnswer('GET', `/words/${form}`, 'If-None-Match: *\r\n'), /^HTTP\/1\.1 200 /);
      const head = await rawAnswer('HEAD', `/words/${form}`);
      assert.match(head, /^HTTP\/1\.1 200 /);
      assert.match(head, new RegExp(`\r\ncontent-length: ${bytes.length}\r\n`, 'i'));
      assert.ok(head.endsWith('\r\n\r\n'), `HEAD got bytes after its headers: ${head}`);
    }
    const error = await fetch(`${base}/words/neither`);
    const body = Buffer.from(await error.arrayBuffer());
    assert.equal(error.status, 400);
    assert.equal(error.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.equal(error.headers.get('content-length'), String(body.length));
    assert.equal((JSON.parse(body.toString('utf8')) as { code: string }).code, 'bad_request');
    const errorHead = await rawAnswer('HEAD', '/words/neither');
    assert.match(errorHead, /^HTTP\/1\.1 400 /);
    assert.ok(errorHead.endsWith('\r\n\r\n'), `HEAD got bytes after its headers: ${errorHead}`);
  });

  test('unknown endpoints are 404 not_found in the contract shape', async () => {
    const res = await call('GET', '/nope');
    assert.equal(res.status, 404);
    assert.equal(res.json.code, 'not_found');
  });

  test('openapi.json documents every route, itself, and the mounted path', async () => {
    const res = await call('GET', '/openapi.json');
    assert.equal(res.status, 200);
    assert.equal(res.json.openapi, '3.0.0');
    assert.deepEqual(res.json.servers, [{ url: '/mnt/api/v1' }]);
    const paths = res.json.paths as Record<string, Record<string, { parameters: Array<{ name: string; in: string }> }>>;
    assert.deepEqual(Object.keys(paths).sort(), ['/drifted', '/openapi.json', '/things', '/things/search', '/things/{id}', '/words/{form}']);
    const get = paths['/things/{id}']?.get;
    assert.ok(get);
    assert.deepEqual(get.parameters.map((p) => `${p.in}:${p.name}`).sort(), ['path:id', 'query:limit', 'query:remoteNode']);
  });

  test('remoteNode: absent or "local" is served; any other node is 400 naming remoteNode', async () => {
    assert.deepEqual((await call('GET', '/things/abc?remoteNode=local')).json, { id: 'abc', limit: 100 });
    for (const query of ['remoteNode=other', 'remoteNode=', 'remoteNode=local&remoteNode=b']) {
      const res = await call('GET', `/things/abc?${query}`);
      assert.equal(res.status, 400, query);
      assert.equal(res.json.code, 'bad_request');
      assert.match(String(res.json.message), /remoteNode/);
    }
    const created = await call('POST', '/things?remoteNode=elsewhere', JSON.stringify({ name: 'not-made' }));
    assert.equal(created.status, 400, 'refused before the handler runs');
  });

  test('with checkResponses, an answer that does not match its declared schema is a 500', async () => {
    const res = await call('GET', '/drifted');
    assert.equal(res.status, 500);
    assert.equal(res.json.code, 'internal_error');
  });

  test('a route declared without a response schema cannot be documented', () => {
    const untyped = { method: 'get', path: '/bare', operationId: 'getBare', summary: 'no response schema', tag: 'test', handler: () => Promise.resolve({}) } as unknown as AnyRoute;
    assert.throws(() => buildOpenApiDocument([untyped], { apiBasePath: '/api/v1', version: '0' }), /getBare declares no response schema/);
  });
});
