import type { Writable } from 'node:stream';
import { errorLogFields, safeLogInfo, type ErrorLogOptions, type LogInfo } from '@trellis/core/protocol';

const LEVELS = { error: 0, warn: 1, info: 2, debug: 3 } as const;
type Level = keyof typeof LEVELS;
type Meta = Record<string, unknown>;
type LogMethod = (message: string | Error, meta?: Meta) => void;

export interface Logger {
  error: LogMethod;
  warn: LogMethod;
  info: LogMethod;
  debug: LogMethod;
  /** A logger that adds `meta` to each of its lines (a line's own fields win). */
  child(meta: Meta): Logger;
}

/**
 * JSON with every object's keys in order and cycles cut, as the worker's lines were written when
 * they came from winston (safe-stable-stringify): the same event always prints the same line.
 */
function stableJson(value: unknown, ancestors: object[] = []): string | undefined {
  if (typeof value === 'bigint') return JSON.stringify(value.toString());
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const own = value as { toJSON?: () => unknown };
  if (typeof own.toJSON === 'function') return stableJson(own.toJSON(), ancestors);
  if (ancestors.includes(value)) return '"[Circular]"';
  const inner = [...ancestors, value];
  if (Array.isArray(value)) return `[${value.map((item) => stableJson(item, inner) ?? 'null').join(',')}]`;
  const fields: string[] = [];
  for (const key of Object.keys(value).sort()) {
    const item = stableJson((value as Meta)[key], inner);
    if (item !== undefined) fields.push(`${JSON.stringify(key)}:${item}`);
  }
  return `{${fields.join(',')}}`;
}

/**
 * JSON lines on stdout, one per event, with the worker id and a timestamp on every line. Every
 * error in a line becomes its message and code (stack at debug only). Written here rather than
 * with winston: a worker logs a few dozen lines in its life, and winston with its formats and
 * streams held about 2 MB of an idle worker's 63 MB. `stream`: where lines go instead of stdout (tests).
 */
export function createWorkerLogger(workerId: string, level: string, silent = false, stream?: Writable): Logger {
  const threshold = LEVELS[level as Level] ?? LEVELS.info;
  const options: ErrorLogOptions = { stack: level === 'debug' };
  const out = stream ?? process.stdout;
  const make = (base: Meta): Logger => {
    const method =
      (name: Level): LogMethod =>
      (message, meta) => {
        if (silent || LEVELS[name] > threshold) return;
        let info: LogInfo;
        if (message instanceof Error) {
          const { message: text, ...fields } = errorLogFields(message, options);
          info = { ...base, level: name, message: text, ...fields };
        } else {
          info = safeLogInfo({ ...base, ...meta, level: name, message }, options);
        }
        out.write(`${stableJson({ ...info, timestamp: new Date().toISOString(), worker: workerId }) ?? '{}'}\n`);
      };
    return { error: method('error'), warn: method('warn'), info: method('info'), debug: method('debug'), child: (meta) => make({ ...base, ...meta }) };
  };
  return make({});
}
