import type { Writable } from 'node:stream';
import winston from 'winston';
import { safeLogInfo } from '@trellis/core/protocol';

export type Logger = winston.Logger;

/**
 * JSON lines on stdout, one per event, with the worker id on every line. Every error in a line
 * becomes its message and code (stack at debug only). The id is added by a format rather than
 * `defaultMeta`, which winston assigns onto a logged Error itself, where it could not be told
 * from the error's own fields.
 */
/** `stream`: where lines go instead of stdout (tests). */
export function createWorkerLogger(workerId: string, level: string, silent = false, stream?: Writable): Logger {
  const options = { stack: level === 'debug' };
  return winston.createLogger({
    level,
    silent,
    format: winston.format.combine(
      winston.format((info) => {
        const safe = safeLogInfo(info, options);
        safe.worker = workerId;
        return safe as winston.Logform.TransformableInfo;
      })(),
      winston.format.timestamp(),
      winston.format.json(),
    ),
    transports: [stream !== undefined ? new winston.transports.Stream({ stream, silent }) : new winston.transports.Console({ silent })],
  });
}
