import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';

/**
 * Property: whatever a client sends to any route of the served OpenAPI document (path params,
 * queries, bodies, headers), the answer is never a 5xx (but a 503 the operation documents) and
 * every error is the contract body. Bounded in runs and time so it fits in `npm test`.
 */

const RUNS = Number(process.env.API_FUZZ_RUNS ?? 600);
const TIME_LIMIT_MS = Number(process.env.API_FUZZ_MS ?? 20_000);
/** Fewer requests than this in the time limit would be a test that passed without fuzzing. */
const MIN_RUNS = Math.min(RUNS, 100);
const REQUEST_TIMEOUT_MS = 5_000;
const ERROR_CODES = new Set(['bad_request', 'not_found', 'internal_error', 'unauthorized', 'forbidden', 'already_exists', 'max_run_reached', 'not_running', 'already_running', 'timeout', 'service_unavailable']);

/**
 * Runs the fuzzing starts wait for a worker that never comes: they stay queued, so hundreds of
 * them cost rows, not processes, and the test's time goes to requests.
 */
const PARKED = 'worker_selector: {fuzz: parked}\n';
const DAGS = { hello: `${PARKED}steps:\n  - name: s1\n    command: "true"\n` };

type Json = Record<string, unknown>;
interface Parameter {
  name: string;
  in: 'path' | 'query';
  schema: Json;
}
interface Operation {
  method: string;
  path: string;
  parameters: Parameter[];
  body: Json | undefined;
  statuses: Set<number>;
  stream: boolean;
}

let t: TestCoordinator;
let operations: Operation[];

before(async () => {
  t = await startTestCoordinator('api_fuzz', DAGS);
  const doc = (await (await fetch(`${t.coordinator.apiUrl}/openapi.json`)).json()) as { paths: Record<string, Record<string, Json>> };
  operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => {
      const responses = op.responses as Record<string, { content?: Record<string, unknown> }>;
      const success = Object.keys(responses).find((s) => s.startsWith('2'));
      return {
        method: method.toUpperCase(),
        path,
        parameters: op.parameters as Parameter[],
        body: (op.requestBody as { content: Record<string, { schema: Json }> } | undefined)?.content['application/json']?.schema,
        statuses: new Set(Object.keys(responses).map(Number)),
        stream: success !== undefined && responses[success]?.content?.['text/event-stream'] !== undefined,
      };
    }),
  );
});

after(async () => t.stop());

// ---- values --------------------------------------------------------------------------------

const NASTY_STRINGS = ['', '\u0000', 'a\u0000b', '%', '%zz', '%E0%A4%A', '..', '.', '../..', 'latest', 'hello', 's1', 'x'.repeat(300), '🤖'.repeat(40), ' ', '\uFFFF', '\uD800', 'a/b', 'a b', '-1', '0', '1e308', '99999999999999999999999', '-8640000000000001', 'null', '[]', '{}', '$(id)', '${X}'];
const NUMBERISH = ['0', '1', '-1', '1.5', '1e308', '-1e308', '9007199254740993', '99999999999999999999999', '8640000000000', '-8640000000000', '253402300800', 'NaN', 'Infinity', ''];
const INSTANTS = ['2024-01-01T00:00:00Z', '0001-01-01T00:00:00Z', '-271821-04-20T00:00:00Z', '+275760-09-13T00:00:00Z', '1900-01-01', 'Tue, 01 Jan 1980 00:00:00 GMT', '0', '-5000'];

const nastyString = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }).map((s) => `${s}\u0000${s}`) },
  { weight: 1, arbitrary: fc.integer({ min: 250, max: 5000 }).map((n) => 'n'.repeat(n)) },
);

/** A spec text: valid-looking documents with odd names, NULs, or junk. */
const specText = fc.oneof(
  fc.constantFrom(
    `${PARKED}steps:\n  - name: s1\n    command: "true"\n`,
    `${PARKED}name: ..\nsteps:\n  - name: s1\n    command: "true"\n`,
    `${PARKED}steps:\n  - name: ".."\n    command: "true"\n`,
    `${PARKED}steps:\n  - name: s1\n    command: "echo \u0000"\n`,
    `${PARKED}steps:\n  - name: s1\n    command: "echo \\0"\n`,
    `${PARKED}name: a\u0000b\nsteps:\n  - "true"\n`,
    `${PARKED}name: ${'n'.repeat(300)}\nsteps:\n  - "true"\n`,
    'steps: [',
    '- - -',
    '{}',
  ),
  nastyString,
);

function integerValue(schema: Json): fc.Arbitrary<unknown> {
  const min = typeof schema.minimum === 'number' ? schema.minimum : 0;
  // In-range values stay small: a start-sync `timeout` (seconds) waits that long for a parked run.
  return fc.oneof(fc.integer({ min, max: min + 1 }), fc.constantFrom(-1, 0, 1e308, -1e308, 2 ** 53 + 2, 8.64e15, 1.5), fc.constantFrom(...NUMBERISH));
}

/** A value for one JSON-schema property: mostly of the right type, often not. */
function valueFor(name: string, schema: Json): fc.Arbitrary<unknown> {
  const wrong = fc.oneof(fc.constantFrom(null, true, 0, -1, 1e308, [], {}, ['a'], { a: 1 }), nastyString);
  let right: fc.Arbitrary<unknown>;
  if (name === 'spec') right = specText;
  else if (name === 'params') right = fc.oneof(fc.constantFrom('{}', '{"a":"\u0000"}', '[1,2]', 'a=b', '{'), nastyString);
  else if (/^(start|end)Time$/.test(name)) right = fc.oneof(fc.constantFrom(...INSTANTS), nastyString);
  else if (Array.isArray(schema.enum)) right = fc.constantFrom(...(schema.enum as unknown[]));
  else if (schema.type === 'integer' || schema.type === 'number') right = integerValue(schema);
  else if (schema.type === 'boolean') right = fc.boolean();
  else if (schema.type === 'object') right = fc.dictionary(nastyString, fc.oneof(nastyString, fc.constant(1)), { maxKeys: 3 });
  else right = nastyString;
  return fc.oneof({ weight: 4, arbitrary: right }, { weight: 1, arbitrary: wrong });
}

// ---- requests ------------------------------------------------------------------------------

interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
  operation: Operation;
}

/**
 * A path segment: percent-encoded, or raw text that may hold a malformed escape. Dot segments
 * are left out: the client resolves them, so they would address paths outside the API.
 */
const segment = (name: string): fc.Arbitrary<string> =>
  fc
    .oneof(
      { weight: 4, arbitrary: valueFor(name, { type: 'string' }).map((v) => encodeURIComponent(Buffer.from(String(v)).toString())) },
      { weight: 1, arbitrary: fc.constantFrom('%', '%zz', '%E0%A4%A', '%00', 'a%2Fb', '%C0%AE', '.%2E.') },
    )
    .filter((s) => !/^(\.|%2e){1,2}$/i.test(s));

function queryOf(params: Parameter[]): fc.Arbitrary<string> {
  const entries = params.filter((p) => p.in === 'query').map((p) => fc.option(valueFor(p.name, p.schema).map((v) => [p.name, v] as const), { nil: undefined }));
  const odd = fc.constantFrom('', '&limit=1&limit=2', '&a[b]=c', '&%zz=1', '&name=%', '&__proto__[x]=1', '&cursor=%00');
  return fc.tuple(fc.tuple(...entries), odd).map(([pairs, extra]) => {
    const search = new URLSearchParams();
    for (const pair of pairs) if (pair !== undefined) search.append(pair[0], typeof pair[1] === 'string' ? pair[1] : JSON.stringify(pair[1]));
    const text = search.toString() + extra;
    return text === '' ? '' : `?${text}`;
  });
}

function bodyOf(schema: Json | undefined): fc.Arbitrary<string | undefined> {
  const properties = (schema?.properties ?? {}) as Record<string, Json>;
  const object = fc.record(Object.fromEntries(Object.entries(properties).map(([name, prop]) => [name, valueFor(name, prop)])), { requiredKeys: [] });
  const raw = fc.oneof(fc.constantFrom('{"a":', 'null', '[]', '"x"', '1e999', '{"__proto__":{"x":1}}', '\u0000', ''), fc.string({ unit: 'binary', maxLength: 30 }));
  return fc.oneof({ weight: 6, arbitrary: object.map((value) => JSON.stringify(value)) }, { weight: 1, arbitrary: raw }, { weight: 1, arbitrary: fc.constant(undefined) });
}

const headersArb = fc.record(
  {
    'content-type': fc.constantFrom('application/json', 'application/json; charset=utf-16', 'application/json; charset=bogus', 'text/plain'),
    'content-encoding': fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'x-nope'),
    'last-event-id': fc.oneof(fc.constantFrom('0', '1', '99999999999999999999999', '9'.repeat(400), '-1', '1.5'), nastyString),
  },
  { requiredKeys: [] },
).map((headers) => Object.fromEntries(Object.entries(headers).filter(([, v]) => !/[^\t\x20-\x7e]/.test(v))));

function requestFor(operation: Operation): fc.Arbitrary<FuzzRequest> {
  const names = [...operation.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string);
  return fc
    .tuple(fc.tuple(...names.map(segment)), queryOf(operation.parameters), operation.body !== undefined ? bodyOf(operation.body) : fc.constant(undefined), headersArb)
    .map(([values, query, body, headers]) => {
      let path = operation.path;
      names.forEach((name, i) => (path = path.replace(`{${name}}`, values[i] ?? '')));
      return { method: operation.method, url: `${t.coordinator.apiUrl}${path}${query}`, headers: { 'content-type': 'application/json', ...headers }, body, operation };
    });
}

async function send(request: FuzzRequest): Promise<{ status: number; contentType: string; text: string }> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), REQUEST_TIMEOUT_MS);
  try {
    const res = await fetch(request.url, {
      method: request.method,
      headers: request.headers,
      signal: controller.signal,
      ...(request.body !== undefined && request.method !== 'GET' ? { body: request.body } : {}),
    });
    const contentType = res.headers.get('content-type') ?? '';
    // An open event stream never ends: its status and headers are the answer.
    if (contentType.startsWith('text/event-stream')) {
      controller.abort();
      return { status: res.status, contentType, text: '' };
    }
    return { status: res.status, contentType, text: await res.text() };
  } finally {
    clearTimeout(timer);
  }
}

function checkAnswer(request: FuzzRequest, answer: { status: number; contentType: string; text: string }): void {
  const where = `${request.method} ${request.url} ${JSON.stringify(request.headers)} body=${JSON.stringify(request.body)}`;
  const documented503 = answer.status === 503 && request.operation.statuses.has(503);
  assert.ok(answer.status < 500 || documented503, `${answer.status} for ${where}: ${answer.text.slice(0, 300)}`);
  if (answer.status < 400) return;
  assert.match(answer.contentType, /^application\/json/, `error without a JSON body for ${where}`);
  const body = JSON.parse(answer.text) as Json;
  assert.ok(typeof body.code === 'string' && ERROR_CODES.has(body.code), `no contract code in ${answer.text} for ${where}`);
  assert.equal(typeof body.message, 'string', `no message in ${answer.text} for ${where}`);
  if (body.details !== undefined) assert.ok(typeof body.details === 'object' && body.details !== null && !Array.isArray(body.details), `details not an object for ${where}`);
}

test('no route answers bad input with a 5xx or a body outside the contract', { timeout: TIME_LIMIT_MS + 60_000 }, async () => {
  assert.ok(operations.length > 30, 'the served OpenAPI document lists the routes');
  const anyRequest = fc.constantFrom(...operations).chain(requestFor);
  let sent = 0;
  await fc.assert(
    fc.asyncProperty(anyRequest, async (request) => {
      sent += 1;
      checkAnswer(request, await send(request));
    }),
    { numRuns: RUNS, interruptAfterTimeLimit: TIME_LIMIT_MS, markInterruptAsFailure: false, endOnFailure: true },
  );
  assert.ok(sent >= MIN_RUNS, `only ${sent} requests within ${TIME_LIMIT_MS} ms; at least ${MIN_RUNS} make a fuzz run`);
  // Whatever the fuzzing stored (or deleted), a new definition can still be created and started.
  const created = await t.call('POST', '/dags', { name: 'after_fuzz', spec: `${PARKED}steps:\n  - "true"\n` });
  assert.equal(created.status, 201, JSON.stringify(created.json));
  const start = await t.call('POST', '/dags/after_fuzz/start', {});
  assert.equal(start.status, 200, JSON.stringify(start.json));
});
