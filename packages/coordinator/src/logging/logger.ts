import winston from 'winston';

export type Logger = winston.Logger;

export interface LoggerOptions {
  level: string;
  format: 'json' | 'text';
}

/** Structured logs; `errors({stack: true})` at logger level or errors lose their stack. */
export function createLogger(options: LoggerOptions): Logger {
  const base = [winston.format.errors({ stack: true }), winston.format.timestamp()];
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
  return winston.createLogger({ level: options.level, format, transports: [new winston.transports.Console()] });
}

/** A logger that drops everything: tests use it to keep their output readable. */
export function createSilentLogger(): Logger {
  return winston.createLogger({ silent: true, transports: [new winston.transports.Console({ silent: true })] });
}
