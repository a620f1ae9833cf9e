/**
 * The last lines of a log that arrives in pieces: a piece may end inside a line, and a log of
 * hundreds of megabytes keeps only `limit` lines, so the page holds a bounded amount whatever
 * the log's size.
 */
export class LogBuffer {
  private lines: string[] = [];
  /** The text after the last newline: the start of a line still being written. */
  private partial = '';

  constructor(private readonly limit: number) {}

  append(text: string): void {
    const pieces = (this.partial + text).split('\n');
    this.partial = pieces.pop() ?? '';
    this.lines.push(...pieces.slice(-this.limit));
    if (this.lines.length > this.limit) this.lines = this.lines.slice(-this.limit);
  }

  clear(): void {
    this.lines = [];
    this.partial = '';
  }

  get text(): string {
    return this.lines.length === 0 ? this.partial : `${this.lines.join('\n')}\n${this.partial}`;
  }
}
