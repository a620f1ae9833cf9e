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
/**
 * A page never holds more than this many bytes of log text, whatever the line lengths: it ends
 * early with hasMore. The contract's line limit alone would let 10,000 long lines (or one line of
 * a progress bar that never printed a newline) fill the coordinator's memory.
 */
export const MAX_PAGE_BYTES = 1024 * 1024;
/**
 * A longer line is cut, and TRUNCATED_LINE_MARKER stands where its bytes were left out: head and
 * offset pages show its first MAX_LINE_BYTES then the marker, tail pages the marker then its last
 * MAX_LINE_BYTES. The rest of the line is never held in memory.
 */
export const MAX_LINE_BYTES = 256 * 1024;
export const TRUNCATED_LINE_MARKER = `[... line truncated by the log reader: longer than ${MAX_LINE_BYTES} bytes]`;
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

const isContinuationByte = (byte: number | undefined): boolean => byte !== undefined && byte >> 6 === 0b10;

/** The bytes of a line cut at its end, up to its last whole UTF-8 character. */
function wholeCharactersAtEnd(bytes: Buffer): Buffer {
  let at = bytes.length - 1;
  while (at > 0 && at > bytes.length - 4 && isContinuationByte(bytes[at])) at -= 1;
  const lead = bytes[at] ?? 0;
  const width = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return at + width > bytes.length ? bytes.subarray(0, at) : bytes;
}

/** The bytes of a line cut at its start, from its first whole UTF-8 character. */
function wholeCharactersAtStart(bytes: Buffer): Buffer {
  let at = 0;
  while (at < 3 && isContinuationByte(bytes[at])) at += 1;
  return bytes.subarray(at);
}

/**
 * One line as it is read, in pieces, holding at most MAX_LINE_BYTES of it: the forward reader
 * appends pieces and keeps the line's first bytes, the backward reader prepends them and keeps
 * its last bytes.
 */
class LineBuffer {
  private pieces: Buffer[] = [];
  private kept = 0;
  /** Bytes of the line seen so far, kept or not. */
  length = 0;

  constructor(private readonly appended: boolean) {}

  get cut(): boolean {
    return this.length > MAX_LINE_BYTES;
  }

  append(bytes: Buffer): void {
    this.length += bytes.length;
    const room = MAX_LINE_BYTES - this.kept;
    if (room <= 0 || bytes.length === 0) return;
    const piece = Buffer.from(bytes.subarray(0, room));
    this.pieces.push(piece);
    this.kept += piece.length;
  }

  prepend(bytes: Buffer): void {
    this.length += bytes.length;
    const room = MAX_LINE_BYTES - this.kept;
    if (room <= 0 || bytes.length === 0) return;
    const piece = Buffer.from(bytes.subarray(Math.max(0, bytes.length - room)));
    this.pieces.unshift(piece);
    this.kept += piece.length;
  }

  /** The line's text, with the marker on the side it was cut when it was, and the buffer emptied for the next line. */
  take(): string {
    const bytes = Buffer.concat(this.pieces);
    let text: string;
    if (!this.cut) text = bytes.toString('utf8');
    else if (this.appended) text = `${wholeCharactersAtEnd(bytes).toString('utf8')} ${TRUNCATED_LINE_MARKER}`;
    else text = `${TRUNCATED_LINE_MARKER} ${wholeCharactersAtStart(bytes).toString('utf8')}`;
    this.pieces = [];
    this.kept = 0;
    this.length = 0;
    return text;
  }

  /** What the line will cost a page once taken. */
  get pageBytes(): number {
    return Math.min(this.length, MAX_LINE_BYTES) + (this.cut ? TRUNCATED_LINE_MARKER.length + 1 : 0);
  }
}

/** Lines of a page and the bytes they hold; full when the next line would pass MAX_PAGE_BYTES. */
class PageLines {
  readonly lines: string[] = [];
  private bytes = 0;
  /** A line of the page was cut. */
  cut = false;

  constructor(private readonly count: number) {}

  get complete(): boolean {
    return this.lines.length >= this.count;
  }

  /** Whether a line of `bytes` still fits (the first line always does: lines are capped below the page). */
  fits(bytes: number): boolean {
    return this.lines.length === 0 || this.bytes + bytes <= MAX_PAGE_BYTES;
  }

  add(line: LineBuffer): void {
    this.bytes += line.pageBytes;
    this.cut ||= line.cut;
    this.lines.push(line.take());
  }
}

/**
 * Reads lines [from, from+count) (0-based) streaming from the start. Memory is bounded by the
 * page: lines before `from` are only counted, a long line is held up to MAX_LINE_BYTES, and a line
 * already cut that ends the page is not read to its end.
 */
async function readForward(file: FileHandle, size: number, from: number, count: number): Promise<{ lines: string[]; more: boolean }> {
  const buf = Buffer.allocUnsafe(CHUNK);
  const page = new PageLines(count);
  const line = new LineBuffer(true);
  const done = (more: boolean) => ({ lines: page.lines, more: more || page.cut });
  let index = 0;
  let position = 0;
  while (position < size) {
    const { bytesRead } = await file.read(buf, 0, Math.min(CHUNK, size - position), position);
    if (bytesRead === 0) break;
    const chunk = buf.subarray(0, bytesRead);
    position += bytesRead;
    let start = 0;
    while (start < bytesRead) {
      const nl = chunk.indexOf(NEWLINE, start);
      const end = nl === -1 ? bytesRead : nl;
      if (index >= from) line.append(chunk.subarray(start, end));
      else line.length += end - start;
      if (nl === -1) break;
      start = nl + 1;
      if (index >= from) {
        if (!page.fits(line.pageBytes)) return done(true);
        page.add(line);
        if (page.complete) return done(position - bytesRead + start < size);
      } else line.take();
      index += 1;
    }
    // A cut line that ends the page need not be read to its end.
    if (index >= from && line.cut && (!page.fits(line.pageBytes) || page.lines.length + 1 >= count)) {
      if (page.fits(line.pageBytes)) page.add(line);
      return done(true);
    }
  }
  if (index >= from && line.length > 0 && !page.complete) {
    if (!page.fits(line.pageBytes)) return done(true);
    page.add(line);
  }
  return done(false);
}

/**
 * Reads the last `count` lines walking backwards from the end of the file, in bounded pieces;
 * more is true when earlier lines exist or a line was cut.
 */
async function readTail(file: FileHandle, size: number, count: number): Promise<{ lines: string[]; more: boolean }> {
  if (size === 0 || count === 0) return { lines: [], more: size > 0 };
  const page = new PageLines(count);
  const line = new LineBuffer(false);
  const done = (more: boolean) => ({ lines: page.lines.reverse(), more: more || page.cut });
  const last = Buffer.allocUnsafe(1);
  await file.read(last, 0, 1, size - 1);
  // A trailing newline ends the last line; it does not start another.
  let position = last[0] === NEWLINE ? size - 1 : size;
  const buf = Buffer.allocUnsafe(CHUNK);
  while (position > 0) {
    const length = Math.min(CHUNK, position);
    position -= length;
    const { bytesRead } = await file.read(buf, 0, length, position);
    let end = bytesRead;
    for (let nl = buf.lastIndexOf(NEWLINE, end - 1); nl !== -1; nl = end > 0 ? buf.lastIndexOf(NEWLINE, end - 1) : -1) {
      line.prepend(buf.subarray(nl + 1, end));
      end = nl;
      if (!page.fits(line.pageBytes)) return done(true);
      page.add(line);
      if (page.complete) return done(true);
    }
    line.prepend(buf.subarray(0, end));
    // A cut line that ends the page need not be read back to its start.
    if (line.cut && (!page.fits(line.pageBytes) || page.lines.length + 1 >= count)) {
      if (page.fits(line.pageBytes)) page.add(line);
      return done(true);
    }
  }
  if (!page.fits(line.pageBytes)) return done(true);
  page.add(line);
  return done(false);
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
      const { lines, more } = await readTail(file, size, window.lines);
      return page(lines, total, more);
    }
    const from = window.kind === 'head' ? 0 : window.offset - 1;
    const count = window.kind === 'head' ? window.lines : window.limit;
    const { lines, more } = await readForward(file, size, from, count);
    return page(lines, total, more);
  } finally {
    await file.close();
  }
}
