import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '@trellis/coordinator';
import { captureLog } from './support/log-capture.js';

/**
 * Metadata holding an error whose code counts its reads: winston only copies the reference into
 * the line, the error format reads the code, so a read means the formats ran.
 */
function watchedMeta(): { meta: Record<string, unknown>; reads: () => number } {
  let reads = 0;
  const error = new Error('slow database');
  Object.defineProperty(error, 'code', {
    enumerable: true,
    get: () => {
      reads += 1;
      return 'E_SLOW';
    },
  });
  return { meta: { error }, reads: () => reads };
}

describe('coordinator logger: levels', () => {
  test('lines below the level are not written; lines at and above it are', () => {
    const log = captureLog('warn');
    log.logger.debug('debug line');
    log.logger.info('info line');
    log.logger.http('http line');
    log.logger.warn('warn line');
    log.logger.error('error line');
    log.logger.log('info', 'info through log()');
    log.logger.log('error', 'error through log()');
    assert.deepEqual(
      log.lines().map((l) => [l.level, l.message]),
      [
        ['warn', 'warn line'],
        ['error', 'error line'],
        ['error', 'error through log()'],
      ],
    );
  });

  test("npm's order: at info, http, verbose, debug and silly are dropped", () => {
    const log = captureLog('info');
    for (const level of ['silly', 'debug', 'verbose', 'http', 'info', 'warn']) log.logger.log(level, `${level} line`);
    assert.deepEqual(
      log.lines().map((l) => l.level),
      ['info', 'warn'],
    );
  });

  test('a dropped line is not formatted: the error in its metadata is never read', () => {
    const log = captureLog('warn');
    const dropped = watchedMeta();
    log.logger.info('request served', dropped.meta);
    assert.equal(dropped.reads(), 0);
    assert.equal(log.text(), '');
    const kept = watchedMeta();
    log.logger.warn('request slow', kept.meta);
    assert.ok(kept.reads() > 0);
    assert.deepEqual(log.lines()[0]?.error, { message: 'slow database', code: 'E_SLOW' });
  });

  test('at debug every level down to debug is written, silly is not', () => {
    const log = captureLog('debug');
    log.logger.silly('silly line');
    log.logger.debug('debug line', { n: 1 });
    log.logger.info('info line');
    assert.deepEqual(
      log.lines().map((l) => [l.level, l.message, l.n]),
      [
        ['debug', 'debug line', 1],
        ['info', 'info line', undefined],
      ],
    );
  });

  test('a logger at a level winston does not know is refused, not silently mute', () => {
    assert.throws(() => createLogger({ level: 'loud', format: 'json' }), /unknown log level "loud"/);
    assert.throws(() => createLogger({ level: 'constructor', format: 'json' }), /unknown log level/);
  });
});
