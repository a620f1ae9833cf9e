// Requests Node's HTTP parser refuses before the app sees them still get the contract's error body.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';
import { rawHttp } from './support/raw-http.js';

let t: TestCoordinator;
before(async () => {
  t = await startTestCoordinator('http_client_errors', {});
});
after(() => t.stop());

/** Sends raw bytes and reads the whole answer (the server closes the connection). */
function raw(text: string): Promise<string> {
  return rawHttp(t.coordinator.apiUrl, text);
}

function parse(answer: string): { status: number; contentType: string; body: Record<string, unknown> } {
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
  const contentType = /content-type: ([^\r\n]+)/i.exec(head)?.[1] ?? '';
  return { status, contentType, body: JSON.parse(body) as Record<string, unknown> };
}

test('a request line longer than the parser reads answers 431 with a JSON error body', async () => {
  const answer = parse(await raw(`GET /api/v1/dags?q=${'x'.repeat(20_000)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`));
  assert.equal(answer.status, 431);
  assert.match(answer.contentType, /^application\/json/);
  assert.equal(answer.body.code, 'bad_request');
  assert.match(String(answer.body.message), /larger than the server reads/);
});

test('bytes that are not HTTP answer 400 with a JSON error body', async () => {
  const answer = parse(await raw('HELLO THERE\r\n\r\n'));
  assert.equal(answer.status, 400);
  assert.equal(answer.body.code, 'bad_request');
});
