import { PassThrough } from 'node:stream';
import { createLogger, type Logger } from '@trellis/coordinator';

export interface LogCapture {
  logger: Logger;
  text: () => string;
  /** Each JSON line the logger wrote, parsed. */
  lines: () => Array<Record<string, unknown>>;
}

/** A coordinator logger writing JSON lines into memory, for tests that read what it logged. */
export function captureLog(level = 'info'): LogCapture {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return {
    logger: createLogger({ level, format: 'json', stream }),
    text: () => text,
    lines: () =>
      text
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}
