import { open, type FileHandle } from 'node:fs/promises';

/** The contract's log page. */
export interface LogPage {
  content: string;
  lineCount: number;
  totalLines: number;
  hasMore: boolean;
  isEstimate: boolean;
}

export type LogWindow =
  | { kind: 'head'; lines: number }
  | { kind: 'tail'; lines: number }
  | { kind: 'range'; offset: number; limit: number };

const CHUNK = 64 * 1024;
/** Above this size totalLines is estimated from a sample instead of counted, so a request never scans gigabytes. */
const EXACT_COUNT_LIMIT = 32 * 1024 * 1024;
/** A page never holds more than this many bytes, whatever the line lengths; it says hasMore instead. */
const MAX_PAGE_BYTES = 8 * 1024 * 1024;
const NEWLINE = 0x0a;

export const EMPTY_LOG_PAGE: LogPage = { content: '', lineCount: 0, totalLines: 0, hasMore: false, isEstimate: false };

interface LineCount {
  total: number;
  estimate: boolean;
}

function countNewlines(buf: Buffer, length: number): number {
  let count = 0;
  let at = buf.indexOf(NEWLINE, 0);
  while (at !== -1 && at < length) {
    count += 1;
    at = buf.indexOf(NEWLINE, at + 1);
  }
  return count;
}

/** Lines in a file: a final line without a newline counts; a trailing newline does not add one. */
async function countLines(file: FileHandle, size: number): Promise<LineCount> {
  if (size === 0) return { total: 0, estimate: false };
  const buf = Buffer.allocUnsafe(CHUNK);
  const scanLimit = Math.min(size, EXACT_COUNT_LIMIT);
  let position = 0;
  let newlines = 0;
  while (position < scanLimit) {
    const { bytesRead } = await file.read(buf, 0, Math.min(CHUNK, scanLimit - position), position);
    if (bytesRead === 0) break;
    newlines += countNewlines(buf, bytesRead);
    position += bytesRead;
  }
  if (size > EXACT_COUNT_LIMIT) {
    const perLine = scanLimit / Math.max(newlines, 1);
    return { total: Math.round(size / perLine), estimate: true };
  }
  const last = Buffer.allocUnsafe(1);
  await file.read(last, 0, 1, size - 1);
  return { total: newlines + (last[0] === NEWLINE ? 0 : 1), estimate: false };
}

/** Reads lines [from, from+count) (0-based) streaming from the start; memory is bounded by the page. */
async function readForward(file: FileHandle, size: number, from: number, count: number): Promise<{ lines: string[]; more: boolean }> {
  const buf = Buffer.allocUnsafe(CHUNK);
  const lines: string[] = [];
  let line = 0;
  let pending: Buffer[] = [];
  let pageBytes = 0;
  let position = 0;
  while (position < size) {
    const { bytesRead } = await file.read(buf, 0, CHUNK, position);
    if (bytesRead === 0) break;
    position += bytesRead;
    let start = 0;
    for (let nl = buf.indexOf(NEWLINE, 0); nl !== -1 && nl < bytesRead; nl = buf.indexOf(NEWLINE, start)) {
      if (line >= from) {
        pending.push(Buffer.from(buf.subarray(start, nl)));
        lines.push(Buffer.concat(pending).toString('utf8'));
        pageBytes += nl - start;
      }
      pending = [];
      line += 1;
      start = nl + 1;
      if (lines.length >= count || pageBytes > MAX_PAGE_BYTES) return { lines, more: position < size || start < bytesRead };
    }
    if (line >= from && start < bytesRead) pending.push(Buffer.from(buf.subarray(start, bytesRead)));
  }
  if (pending.length > 0 && line >= from && lines.length < count) lines.push(Buffer.concat(pending).toString('utf8'));
  return { lines, more: false };
}

/** Reads the last `count` lines by walking backwards from the end of the file. */
async function readTail(file: FileHandle, size: number, count: number): Promise<string[]> {
  if (size === 0 || count === 0) return [];
  const chunks: Buffer[] = [];
  let position = size;
  let newlines = 0;
  const last = Buffer.allocUnsafe(1);
  await file.read(last, 0, 1, size - 1);
  // A trailing newline ends the last line; it does not start another.
  const needed = count + (last[0] === NEWLINE ? 1 : 0);
  let collected = 0;
  while (position > 0 && newlines < needed && collected <= MAX_PAGE_BYTES) {
    const length = Math.min(CHUNK, position);
    position -= length;
    const buf = Buffer.allocUnsafe(length);
    await file.read(buf, 0, length, position);
    newlines += countNewlines(buf, length);
    chunks.unshift(buf);
    collected += length;
  }
  let text = Buffer.concat(chunks).toString('utf8');
  if (text.endsWith('\n')) text = text.slice(0, -1);
  const lines = text.split('\n');
  return lines.slice(Math.max(lines.length - count, position > 0 ? 1 : 0));
}

function page(lines: string[], total: LineCount, hasMore: boolean): LogPage {
  return { content: lines.join('\n'), lineCount: lines.length, totalLines: total.total, hasMore, isEstimate: total.estimate };
}

/**
 * One page of a log file without reading the whole file into memory. A missing file is an
 * empty page: a step that has not written anything yet has no log.
 */
export async function readLogPage(path: string, window: LogWindow): Promise<LogPage> {
  let file: FileHandle;
  try {
    file = await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return EMPTY_LOG_PAGE;
    throw error;
  }
  try {
    const { size } = await file.stat();
    const total = await countLines(file, size);
    if (window.kind === 'tail') {
      const lines = await readTail(file, size, window.lines);
      return page(lines, total, total.total > lines.length);
    }
    const from = window.kind === 'head' ? 0 : window.offset - 1;
    const count = window.kind === 'head' ? window.lines : window.limit;
    const { lines, more } = await readForward(file, size, from, count);
    return page(lines, total, more);
  } finally {
    await file.close();
  }
}
