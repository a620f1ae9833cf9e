import { logBytes, logLineStart, logTail, type Db, type LogStreamInfo, type LogStreamRef } from '@trellis/store';

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

/** Bytes fetched per read; a tail's first read is smaller, as the last lines are usually short. */
const WINDOW = 64 * 1024;
const FIRST_TAIL_WINDOW = 16 * 1024;

/** Lines of a stream: a final line without a newline counts; a trailing newline does not add one. */
function totalLines(info: LogStreamInfo): number {
  return info.size === 0 ? 0 : info.newlines + (info.endsWithNewline ? 0 : 1);
}

/** A stream's bytes from `from` to its end, read a window at a time as the reader goes. */
async function* bytesForward(db: Db, ref: LogStreamRef, from: number, size: number): AsyncGenerator<Buffer> {
  for (let at = from; at < size; at += WINDOW) {
    const bytes = await logBytes(db, ref, at, Math.min(at + WINDOW, size));
    if (bytes.length === 0) return;
    yield bytes;
  }
}

/** A stream's bytes walking back from its end, a window at a time, the last first; `last` is the window already read. */
async function* bytesBackward(db: Db, ref: LogStreamRef, size: number, last: Buffer): AsyncGenerator<Buffer> {
  yield last;
  for (let end = size - last.length; end > 0; end -= WINDOW) {
    const bytes = await logBytes(db, ref, Math.max(0, end - WINDOW), end);
    if (bytes.length === 0) return;
    yield bytes;
  }
}

const isContinuationByte = (byte: number | undefined): boolean => byte !== undefined && byte >> 6 === 0b10;

/** The bytes of a line cut at its end, up to its last whole UTF-8 character (also: what of a followed log's bytes can be sent yet). */
export function wholeCharactersAtEnd(bytes: Buffer): Buffer {
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
 * its last bytes. Pieces are views into the read windows (at most 64 KiB each), not copies.
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
    const piece = bytes.subarray(0, room);
    this.pieces.push(piece);
    this.kept += piece.length;
  }

  prepend(bytes: Buffer): void {
    this.length += bytes.length;
    const room = MAX_LINE_BYTES - this.kept;
    if (room <= 0 || bytes.length === 0) return;
    const piece = bytes.subarray(Math.max(0, bytes.length - room));
    this.pieces.unshift(piece);
    this.kept += piece.length;
  }

  /** The line's text, with the marker on the side it was cut when it was, and the buffer emptied for the next line. */
  take(): string {
    // Most lines are one view into one read window: decoded as it is, not copied first.
    const bytes = this.pieces.length === 1 && this.pieces[0] !== undefined ? this.pieces[0] : Buffer.concat(this.pieces);
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
 * Reads lines [from, from+count) (0-based) from `pieces`, which start at byte `position` with
 * line `index` (the line index finds the piece; a line that began in an earlier piece has an
 * index below `from`). Memory is bounded by the page: lines before `from` are only counted, a
 * long line is held up to MAX_LINE_BYTES, and a line already cut that ends the page is not read
 * to its end.
 */
async function readForward(pieces: AsyncIterable<Buffer>, start: { position: number; index: number; size: number }, from: number, count: number): Promise<{ lines: string[]; more: boolean }> {
  const page = new PageLines(count);
  const line = new LineBuffer(true);
  const done = (more: boolean) => ({ lines: page.lines, more: more || page.cut });
  const { size } = start;
  let { index, position } = start;
  for await (const chunk of pieces) {
    const bytesRead = chunk.length;
    position += bytesRead;
    let at = 0;
    while (at < bytesRead) {
      const nl = chunk.indexOf(NEWLINE, at);
      const end = nl === -1 ? bytesRead : nl;
      if (index >= from) line.append(chunk.subarray(at, end));
      else line.length += end - at;
      if (nl === -1) break;
      at = nl + 1;
      if (index >= from) {
        if (!page.fits(line.pageBytes)) return done(true);
        page.add(line);
        if (page.complete) return done(position - bytesRead + at < size);
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
 * Reads the last `count` lines from `pieces` (the stream's bytes in windows, last first); more is true
 * when earlier lines exist or a line was cut.
 */
async function readTail(pieces: AsyncIterable<Buffer>, info: LogStreamInfo, count: number): Promise<{ lines: string[]; more: boolean }> {
  if (info.size === 0 || count === 0) return { lines: [], more: info.size > 0 };
  const page = new PageLines(count);
  const line = new LineBuffer(false);
  const done = (more: boolean) => ({ lines: page.lines.reverse(), more: more || page.cut });
  // A trailing newline ends the last line; it does not start another.
  let skipLast = info.endsWithNewline;
  for await (const piece of pieces) {
    const buf = skipLast ? piece.subarray(0, piece.length - 1) : piece;
    skipLast = false;
    let end = buf.length;
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

function page(lines: string[], total: number, hasMore: boolean): LogPage {
  return { content: lines.join('\n'), lineCount: lines.length, totalLines: total, hasMore, isEstimate: false };
}

type StreamTail = Awaited<ReturnType<typeof logTail>>;

/** The last `count` lines, from the stream's last bytes (`tail`) and as many windows before them as they need. */
async function tailPage(db: Db, ref: LogStreamRef, tail: StreamTail, count: number): Promise<LogPage> {
  if (tail === undefined || tail.info.size === 0) return EMPTY_LOG_PAGE;
  const { lines, more } = await readTail(bytesBackward(db, ref, tail.info.size, tail.bytes), tail.info, count);
  return page(lines, totalLines(tail.info), more);
}

/**
 * The last `count` lines of `ref`, only while it is still the log of its run's current attempt
 * and the run has ended: undefined otherwise (retried or deleted since), and when nothing is
 * stored. Usually one round trip.
 */
export async function readEndedTail(db: Db, ref: LogStreamRef, count: number): Promise<LogPage | undefined> {
  const tail = await logTail(db, ref, FIRST_TAIL_WINDOW, true);
  return tail === undefined ? undefined : tailPage(db, ref, tail, count);
}

/**
 * The byte offset where the last `count` lines of `ref` start (0 when it holds no more lines):
 * the line index finds the piece holding their first line, so only that piece is read, whatever
 * the log's size. A follower starts there, so the tail is bounded as a page is: when the lines
 * hold more than MAX_PAGE_BYTES, it starts at the first line (or whole character) of the last
 * MAX_PAGE_BYTES instead (2,000 lines of a progress bar would otherwise be sent whole).
 */
export async function tailStart(db: Db, ref: LogStreamRef, count: number): Promise<number> {
  const start = await logLineStart(db, ref, count, true);
  if (start === undefined) return 0;
  const size = start.info.size;
  // Newlines to pass from the piece's start: the one ending the line before the tail is the last.
  const newlines = totalLines(start.info) - count - start.linesBefore;
  const from = newlines <= 0 ? start.offset : await afterNewlines(db, ref, start.offset, size, newlines);
  return size - from > MAX_PAGE_BYTES ? boundedStart(db, ref, size) : from;
}

/** The offset just after the `newlines`-th newline from `from` (the stream's end when there are fewer). */
async function afterNewlines(db: Db, ref: LogStreamRef, from: number, size: number, newlines: number): Promise<number> {
  let position = from;
  let left = newlines;
  for await (const bytes of bytesForward(db, ref, from, size)) {
    for (let nl = bytes.indexOf(NEWLINE); nl !== -1; nl = bytes.indexOf(NEWLINE, nl + 1)) {
      left -= 1;
      if (left === 0) return position + nl + 1;
    }
    position += bytes.length;
  }
  return position;
}

/** Where the last MAX_PAGE_BYTES of a stream start: after the first newline in them, else at their first whole character. */
async function boundedStart(db: Db, ref: LogStreamRef, size: number): Promise<number> {
  const from = size - MAX_PAGE_BYTES;
  const bytes = await logBytes(db, ref, from, Math.min(size, from + MAX_LINE_BYTES));
  const nl = bytes.indexOf(NEWLINE);
  if (nl !== -1 && nl + 1 < size - from) return from + nl + 1;
  return from + (bytes.length - wholeCharactersAtStart(bytes).length);
}

/**
 * One page of a stored log, fetching only the pieces it shows: the stream's row gives the exact
 * total, the line index the piece where the page starts. A log nothing was stored for yet (a
 * step that printed nothing) is an empty page.
 */
export async function readLogPage(db: Db, ref: LogStreamRef, window: LogWindow): Promise<LogPage> {
  if (window.kind === 'tail') return tailPage(db, ref, await logTail(db, ref, FIRST_TAIL_WINDOW), window.lines);
  const from = window.kind === 'head' ? 0 : window.offset - 1;
  const count = window.kind === 'head' ? window.lines : window.limit;
  const start = await logLineStart(db, ref, from);
  if (start === undefined || start.info.size === 0) return EMPTY_LOG_PAGE;
  const total = totalLines(start.info);
  if (from >= total) return page([], total, false);
  const { lines, more } = await readForward(bytesForward(db, ref, start.offset, start.info.size), { position: start.offset, index: start.linesBefore, size: start.info.size }, from, count);
  return page(lines, total, more);
}
