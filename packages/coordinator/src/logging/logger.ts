import type { Writable } from 'node:stream';
import winston from 'winston';
import { safeLogInfo } from '@trellis/core';

export type Logger = winston.Logger;

export interface LoggerOptions {
  level: string;
  format: 'json' | 'text';
  /** Where lines go; default: stdout. */
  stream?: Writable;
}

/**
 * Every error in a line, top-level or nested in its metadata, becomes its message and code
 * (stack at debug only): winston's own `format.errors` reaches only the top level, and an
 * error's other fields may hold secrets (a `pg` error holds its client).
 */
export function errorFormat(level: string): winston.Logform.Format {
  const options = { stack: level === 'debug' };
  return winston.format((info) => safeLogInfo(info, options) as winston.Logform.TransformableInfo)();
}

/** triple-beam's key for a line's level (winston, logform): a global symbol. */
const LEVEL = Symbol.for('level');

/**
 * Drops a line below `level` before any other format runs. winston filters by level only in its
 * transports, after the whole format chain: a line dropped at level warn cost 21-27 us, and
 * winston's paths were about a tenth of what the coordinator allocated per local run (a sampling
 * heap profile of the local-executor bench). The logger's levels are npm's, winston's default;
 * its level is the configuration's, fixed for its life (nothing sets `logger.level` later). An
 * unknown line level is dropped, as winston's transports do; an unknown logger level is refused.
 */
function levelGate(level: string): winston.Logform.Format {
  const { levels } = winston.config.npm;
  const limit = Object.hasOwn(levels, level) ? levels[level] : undefined;
  if (limit === undefined) throw new Error(`unknown log level "${level}" (one of ${Object.keys(levels).join(', ')})`);
  return winston.format((info) => ((levels[String(info[LEVEL])] ?? Number.POSITIVE_INFINITY) <= limit ? info : false))();
}

/** Structured logs: one JSON object a line, or readable text. */
export function createLogger(options: LoggerOptions): Logger {
  const base = [levelGate(options.level), errorFormat(options.level), winston.format.timestamp()];
  const format =
    options.format === 'json'
      ? winston.format.combine(...base, winston.format.json())
      : winston.format.combine(
          ...base,
          winston.format.printf(({ timestamp, level, message, stack, ...rest }) => {
            const extra = Object.keys(rest).length > 0 ? ` ${JSON.stringify(rest)}` : '';
            const trace = typeof stack === 'string' ? `\n${stack}` : '';
            return `${String(timestamp)} ${level} ${String(message)}${extra}${trace}`;
          }),
        );
  const transport = options.stream !== undefined ? new winston.transports.Stream({ stream: options.stream }) : new winston.transports.Console();
  return winston.createLogger({ level: options.level, format, transports: [transport] });
}

/** A logger that drops everything: tests use it to keep their output readable. */
export function createSilentLogger(): Logger {
  return winston.createLogger({ silent: true, transports: [new winston.transports.Console({ silent: true })] });
}
