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

/** Structured logs: one JSON object a line, or readable text. */
export function createLogger(options: LoggerOptions): Logger {
  const base = [errorFormat(options.level), winston.format.timestamp()];
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
