import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { loadServerConfig, startCoordinator } from '@trellis/coordinator';
import { captureLog } from './support/log-capture.js';

/**
 * An error as pg-pool hands it to `pool.on('error')` when an idle connection dies: a
 * DatabaseError with the real pg client attached (`err.client = client`), whose connection
 * parameters and backend cancel key must never reach a log.
 */
function poolError(): Error {
  const client = new pg.Client({ connectionString: 'postgres://app:hunter2@db.internal:5432/trellis' });
  Object.assign(client, { processID: 4242, secretKey: 987654321 });
  return Object.assign(new Error('terminating connection due to administrator command'), { name: 'error', code: '57P01', severity: 'FATAL', routine: 'ProcessInterrupts', client });
}

const FORBIDDEN = /hunter2|db\.internal|secretKey|987654321|processID|connectionParameters|"client"/;

describe('coordinator logger: errors', () => {
  test('an error nested in metadata keeps its message and code, and nothing of the pg client', () => {
    const log = captureLog('info');
    log.logger.error('database connection error', { error: poolError() });
    assert.deepEqual(log.lines()[0]?.error, { message: 'terminating connection due to administrator command', name: 'error', code: '57P01' });
    assert.doesNotMatch(log.text(), FORBIDDEN);
    assert.ok(log.text().length < 400, `one short line, not the client: ${log.text().length} bytes`);
  });

  test('a plain Error in metadata prints its message, not {}', () => {
    const log = captureLog('info');
    log.logger.error('the coordinator could not start', { error: new Error('the worker gRPC server listens on 0.0.0.0, beyond loopback') });
    assert.deepEqual(log.lines()[0]?.error, { message: 'the worker gRPC server listens on 0.0.0.0, beyond loopback' });
  });

  test('an error logged alone or after a message keeps its message and code, drops the client', () => {
    const log = captureLog('info');
    log.logger.error(poolError());
    log.logger.warn('pool trouble', poolError());
    const [alone, after] = log.lines();
    assert.equal(alone?.message, 'terminating connection due to administrator command');
    assert.equal(alone?.code, '57P01');
    assert.match(String(after?.message), /^pool trouble/);
    assert.equal((after?.error as { code?: string } | undefined)?.code, '57P01');
    assert.doesNotMatch(log.text(), FORBIDDEN);
  });

  test('causes and aggregated errors keep their message and code', () => {
    const log = captureLog('info');
    const cause = Object.assign(new Error('database "gone" does not exist'), { code: '3D000', client: {} });
    log.logger.error('start failed', { error: new Error('cannot open the PostgreSQL database', { cause }) });
    // What net.connect gives when every address of "localhost" refuses: an empty message.
    const refused = new AggregateError([Object.assign(new Error('connect ECONNREFUSED ::1:5432'), { code: 'ECONNREFUSED' })], '');
    log.logger.error('connect failed', { error: Object.assign(refused, { code: 'ECONNREFUSED' }) });
    const [wrapped, aggregate] = log.lines();
    assert.deepEqual(wrapped?.error, { message: 'cannot open the PostgreSQL database', cause: { message: 'database "gone" does not exist', code: '3D000' } });
    assert.deepEqual(aggregate?.error, { message: 'connect ECONNREFUSED ::1:5432', name: 'AggregateError', code: 'ECONNREFUSED', errors: [{ message: 'connect ECONNREFUSED ::1:5432', code: 'ECONNREFUSED' }] });
  });

  test('stacks only at debug', () => {
    const info = captureLog('info');
    info.logger.error('x', { error: new Error('boom') });
    info.logger.error(new Error('bare'));
    assert.doesNotMatch(info.text(), /"stack"|logging\.errors\.test/);
    const debug = captureLog('debug');
    debug.logger.error('x', { error: new Error('boom') });
    debug.logger.error(new Error('bare'));
    const [nested, bare] = debug.lines();
    assert.match(String((nested?.error as { stack?: string } | undefined)?.stack), /Error: boom\n\s+at /);
    assert.match(String(bare?.stack), /Error: bare\n\s+at /);
  });

  test('a real refusal to start is logged with its message', async () => {
    const log = captureLog('info');
    const config = loadServerConfig({ env: {}, overrides: { grpcHost: '0.0.0.0', grpcPort: 0, port: 0 } });
    const error = await startCoordinator(config, log.logger).then(
      () => assert.fail('started without a worker token beyond loopback'),
      (e: unknown) => e,
    );
    log.logger.error('the coordinator could not start', { error });
    assert.match(String((log.lines()[0]?.error as { message?: string } | undefined)?.message), /beyond loopback: set workerToken/);
  });
});
