import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { createWorkerLogger } from '@trellis/worker';

function capture(level: string) {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return {
    logger: createWorkerLogger('w1', level, false, stream),
    text: () => text,
    lines: () =>
      text
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

/** A gRPC failure as grpc-js builds it: code, details and metadata besides the message. */
function grpcError(): Error {
  return Object.assign(new Error('14 UNAVAILABLE: No connection established'), { code: 14, details: 'No connection established', metadata: { internalRepr: new Map([['authorization', ['Bearer s3cret']]]) } });
}

test('an error nested in metadata keeps its message and code, nothing else', () => {
  const log = capture('info');
  log.logger.error('report failed', { error: grpcError() });
  const [line] = log.lines();
  assert.equal(line?.worker, 'w1');
  assert.deepEqual(line?.error, { message: '14 UNAVAILABLE: No connection established', code: '14' });
  assert.doesNotMatch(log.text(), /s3cret|metadata|internalRepr/);
});

test('a plain Error in metadata prints its message, not {}', () => {
  const log = capture('info');
  log.logger.warn('x', { error: new Error('went wrong') });
  assert.deepEqual(log.lines()[0]?.error, { message: 'went wrong' });
});

test('an error logged alone keeps message, code and the worker id; stacks only at debug', () => {
  const info = capture('info');
  info.logger.error(grpcError());
  const [line] = info.lines();
  assert.equal(line?.message, '14 UNAVAILABLE: No connection established');
  assert.equal(line?.code, '14');
  assert.equal(line?.worker, 'w1');
  assert.doesNotMatch(info.text(), /"stack"|s3cret/);
  const debug = capture('debug');
  debug.logger.error('x', { error: new Error('boom') });
  assert.match(String((debug.lines()[0]?.error as { stack?: string } | undefined)?.stack), /Error: boom\n\s+at /);
});

test('a line holds the fields in key order, a child logger adds its own, and a level below the threshold is not written', () => {
  const log = capture('info');
  log.logger.child({ dagRunId: 'r1' }).info('run finished', { status: 'succeeded', labels: { b: '2', a: '1' }, big: 10n });
  log.logger.debug('not written');
  const lines = log.text().trim().split('\n');
  assert.equal(lines.length, 1);
  assert.match(lines[0] ?? '', /^\{"big":"10","dagRunId":"r1","labels":\{"a":"1","b":"2"\},"level":"info","message":"run finished","status":"succeeded","timestamp":"[^"]+","worker":"w1"\}$/);
});
