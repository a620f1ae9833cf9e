import winston from 'winston';

export type Logger = winston.Logger;

/** JSON lines on stdout, one per event, with the worker id on every line. */
export function createWorkerLogger(workerId: string, level: string, silent = false): Logger {
  return winston.createLogger({
    level,
    silent,
    defaultMeta: { worker: workerId },
    format: winston.format.combine(winston.format.errors({ stack: true }), winston.format.timestamp(), winston.format.json()),
    transports: [new winston.transports.Console({ silent })],
  });
}
