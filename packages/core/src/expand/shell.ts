/**
 * `${...}` references in text a POSIX shell will parse (a shell step's command or script).
 *
 * A resolved value is never pasted into the text: the shell would parse it as code, so a param
 * `x; id` or `$(touch f)` would run commands. Each reference becomes a reference to an
 * environment variable the caller binds to the value (`bind` returns its name), and the shell
 * expands it as data, exactly as it would expand `$NAME` written at that spot: inside double
 * quotes it is one word, unquoted it is split on whitespace, never executed. Inside single
 * quotes (where the shell expands nothing) the quote is closed around a double-quoted reference:
 * `'a ${X} b'` becomes `'a '"${V}"' b'`.
 *
 * Where the shell expands nothing and quotes mean nothing (a `#` comment, the body of a quoted
 * heredoc `<<'EOF'`), a reference stays as written, as `$NAME` would: the shell never reads a
 * comment, and a quoted heredoc is often a script for another shell (`bash <<'EOF'`, `ssh host
 * <<'EOF'`) that must not get the value as code; a local one expands `${NAME}` from its
 * environment instead. In an unquoted heredoc body quotes are literal and `$` expands, so a
 * reference becomes a plain variable reference.
 *
 * The quoting scanner follows the common forms (quotes, backslashes, `$'...'`, `$(...)`,
 * `$((...))`, backticks, comments and heredocs). Safety does not depend on it: a reference in a
 * context it misjudges prints the variable's name or quotes literally, or is left for the shell
 * to expand as written, but the value is never parsed as code.
 */
import { expandReferences, type ReferenceResolver } from './index.js';

/** `heredoc`: an unquoted heredoc body; `literal`: a comment or a quoted heredoc body. */
type Context = 'plain' | 'double' | 'single' | 'ansi' | 'heredoc' | 'literal';

interface Frame {
  context: Context;
  /** `$(` frames: open parentheses inside, so the matching `)` is found. */
  depth: number;
  /** Opened by a backtick: the next unescaped backtick closes it. */
  backtick?: boolean;
  /** `$((...))` or `((...))`: `<<` is a shift and `#` no comment. */
  arithmetic?: boolean;
  /** A heredoc body (`literal` without it is a comment). */
  heredoc?: Heredoc;
}

interface Heredoc {
  delimiter: string;
  quoted: boolean;
  /** `<<-`: leading tabs of body lines and of the delimiter line are ignored. */
  stripTabs: boolean;
  /** The scanner is at the start of a body line. */
  lineStart?: boolean;
}

/** Unquoted, these end a word (a heredoc delimiter, too), and a `#` after them starts a comment. */
const WORD_BREAK = new Set([' ', '\t', '\n', ';', '&', '|', '(', ')', '<', '>']);

/** The quoting context of every position of a text, scanned once from the left. */
class QuoteScanner {
  private readonly stack: Frame[] = [{ context: 'plain', depth: 0 }];
  private at = 0;
  private wordStart = true;
  /** Heredocs whose operator was read; their bodies start after the next unquoted newline. */
  private readonly pending: Heredoc[] = [];

  constructor(private readonly text: string) {}

  /** The context at `position` (positions are visited in increasing order). */
  contextAt(position: number): Context {
    while (this.at < position) this.step();
    return this.top.context;
  }

  /** Skips a reference: its characters change no quoting, and it is part of a word or line. */
  skipTo(position: number): void {
    this.at = Math.max(this.at, position);
    this.wordStart = false;
    const heredoc = this.top.heredoc;
    if (heredoc !== undefined) heredoc.lineStart = false;
  }

  private get top(): Frame {
    return this.stack[this.stack.length - 1] ?? { context: 'plain', depth: 0 };
  }

  private push(frame: Frame): void {
    this.stack.push(frame);
    this.wordStart = frame.context === 'plain';
  }

  private pop(): void {
    this.stack.pop();
    this.wordStart = false;
  }

  private step(): void {
    const text = this.text;
    const frame = this.top;
    if (frame.heredoc?.lineStart === true && this.endsHeredoc(frame.heredoc)) return;
    const ch = text[this.at];
    const next = text[this.at + 1];
    this.at += 1;
    switch (frame.context) {
      case 'single':
        if (ch === "'") this.pop();
        return;
      case 'ansi':
        if (ch === '\\') this.at += 1;
        else if (ch === "'") this.pop();
        return;
      case 'double':
        if (ch === '\\') this.at += 1;
        else if (ch === '"') this.pop();
        else this.substitution(ch, next);
        return;
      case 'literal':
        if (frame.heredoc !== undefined) frame.heredoc.lineStart = ch === '\n';
        else if (ch === '\n') this.newline(true);
        return;
      case 'heredoc':
        if (frame.heredoc !== undefined) frame.heredoc.lineStart = ch === '\n';
        if (ch === '\\') this.at += 1;
        else this.substitution(ch, next);
        return;
      case 'plain':
        this.plain(frame, ch, next);
        return;
    }
  }

  private plain(frame: Frame, ch: string | undefined, next: string | undefined): void {
    const wordStart = this.wordStart;
    this.wordStart = ch !== undefined && WORD_BREAK.has(ch);
    if (ch === '\\') {
      this.at += 1;
      this.wordStart = false;
    } else if (ch === "'") this.push({ context: 'single', depth: 0 });
    else if (ch === '"') this.push({ context: 'double', depth: 0 });
    else if (ch === '$' && next === "'") {
      this.at += 1;
      this.push({ context: 'ansi', depth: 0 });
    } else if (ch === '#' && wordStart && frame.arithmetic !== true) this.push({ context: 'literal', depth: 0 });
    else if (ch === '\n') this.newline(false);
    else if (ch === '<' && next === '<' && frame.arithmetic !== true) this.heredocOperator();
    else if (ch === '(' && next === '(' && wordStart) {
      this.at += 1;
      this.push({ context: 'plain', depth: 1, arithmetic: true });
    } else if (ch === '(' && this.stack.length > 1) frame.depth += 1;
    else if (ch === ')' && this.stack.length > 1 && frame.backtick !== true) {
      if (frame.depth === 0) this.pop();
      else frame.depth -= 1;
    } else if (ch === '`' && frame.backtick === true) this.pop();
    else this.substitution(ch, next);
  }

  /** `$(`, `$((` and backticks open a nested command, itself unquoted. */
  private substitution(ch: string | undefined, next: string | undefined): void {
    if (ch === '$' && next === '(') {
      this.at += 1;
      const arithmetic = this.text[this.at] === '(';
      if (arithmetic) this.at += 1;
      this.push({ context: 'plain', depth: arithmetic ? 1 : 0, ...(arithmetic ? { arithmetic } : {}) });
    } else if (ch === '`') this.push({ context: 'plain', depth: 0, backtick: true });
  }

  /** An unquoted newline (or the one ending a comment): pending heredoc bodies start after it. */
  private newline(endsComment: boolean): void {
    if (endsComment) this.pop();
    this.wordStart = true;
    this.startHeredoc();
  }

  private startHeredoc(): void {
    const heredoc = this.pending.shift();
    if (heredoc === undefined) return;
    heredoc.lineStart = true;
    this.push({ context: heredoc.quoted ? 'literal' : 'heredoc', depth: 0, heredoc });
  }

  /** After `<<`: reads `-`, blanks and the delimiter word (here-strings `<<<` are no heredoc). */
  private heredocOperator(): void {
    const text = this.text;
    this.at += 1;
    if (text[this.at] === '<') {
      this.at += 1;
      return;
    }
    const stripTabs = text[this.at] === '-';
    if (stripTabs) this.at += 1;
    while (text[this.at] === ' ' || text[this.at] === '\t') this.at += 1;
    let delimiter = '';
    let quoted = false;
    while (this.at < text.length && !WORD_BREAK.has(text[this.at] ?? '')) {
      const ch = text[this.at] ?? '';
      if (ch === "'" || ch === '"') {
        quoted = true;
        const close = text.indexOf(ch, this.at + 1);
        const end = close === -1 ? text.length : close;
        delimiter += text.slice(this.at + 1, end);
        this.at = end + 1;
      } else if (ch === '\\') {
        quoted = true;
        delimiter += text[this.at + 1] ?? '';
        this.at += 2;
      } else {
        delimiter += ch;
        this.at += 1;
      }
    }
    this.wordStart = false;
    if (delimiter !== '') this.pending.push({ delimiter, quoted, stripTabs });
  }

  /** At a body line's start: a line that is the delimiter ends the body (and starts the next pending one). */
  private endsHeredoc(heredoc: Heredoc): boolean {
    const text = this.text;
    let start = this.at;
    if (heredoc.stripTabs) while (text[start] === '\t') start += 1;
    const lineEnd = text.indexOf('\n', start);
    const end = lineEnd === -1 ? text.length : lineEnd;
    if (text.slice(start, end) !== heredoc.delimiter) return false;
    this.at = lineEnd === -1 ? end : end + 1;
    this.pop();
    this.wordStart = true;
    this.startHeredoc();
    return true;
  }
}

/**
 * Expands `${...}` references in shell text into references to variables `bind` names (see the
 * module comment); unresolved references and every other `$` form stay for the shell.
 */
export function expandForShell(text: string, resolve: ReferenceResolver, bind: (value: string) => string): string {
  if (!text.includes('${')) return text;
  const scanner = new QuoteScanner(text);
  return expandReferences(text, (head, path, offset) => {
    const context = scanner.contextAt(offset);
    // The reference's own characters change no quoting.
    scanner.skipTo(offset + head.length + 2);
    if (context === 'literal') return undefined;
    const value = resolve(head, path, offset);
    if (value === undefined) return undefined;
    const name = bind(value);
    if (context === 'single') return `'"\${${name}}"'`;
    if (context === 'ansi') return `'"\${${name}}"$'`;
    return `\${${name}}`;
  });
}
