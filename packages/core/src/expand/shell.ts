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
 * The quoting scanner follows the common forms (quotes, backslashes, `$'...'`, `$(...)` and
 * backticks). Safety does not depend on it: a reference in a context it misjudges prints the
 * variable's name or quotes literally, but the value is never parsed as code.
 */
import { expandReferences, type ReferenceResolver } from './index.js';

type Context = 'plain' | 'double' | 'single' | 'ansi';

interface Frame {
  context: Context;
  /** `$(` frames: open parentheses inside, so the matching `)` is found. */
  depth: number;
  /** Opened by a backtick: the next unescaped backtick closes it. */
  backtick?: boolean;
}

/** The quoting context of every position of a text, scanned once from the left. */
class QuoteScanner {
  private readonly stack: Frame[] = [{ context: 'plain', depth: 0 }];
  private at = 0;

  constructor(private readonly text: string) {}

  /** The context at `position` (positions are visited in increasing order). */
  contextAt(position: number): Context {
    while (this.at < position) this.step();
    return this.top.context;
  }

  /** Skips a reference: its characters change no quoting. */
  skipTo(position: number): void {
    this.at = Math.max(this.at, position);
  }

  private get top(): Frame {
    return this.stack[this.stack.length - 1] ?? { context: 'plain', depth: 0 };
  }

  private step(): void {
    const text = this.text;
    const ch = text[this.at];
    const next = text[this.at + 1];
    const frame = this.top;
    this.at += 1;
    switch (frame.context) {
      case 'single':
        if (ch === "'") this.stack.pop();
        return;
      case 'ansi':
        if (ch === '\\') this.at += 1;
        else if (ch === "'") this.stack.pop();
        return;
      case 'double':
        if (ch === '\\') this.at += 1;
        else if (ch === '"') this.stack.pop();
        else this.substitution(ch, next);
        return;
      case 'plain':
        if (ch === '\\') this.at += 1;
        else if (ch === "'") this.stack.push({ context: 'single', depth: 0 });
        else if (ch === '"') this.stack.push({ context: 'double', depth: 0 });
        else if (ch === '$' && next === "'") {
          this.at += 1;
          this.stack.push({ context: 'ansi', depth: 0 });
        } else if (ch === '(' && this.stack.length > 1) frame.depth += 1;
        else if (ch === ')' && this.stack.length > 1 && frame.backtick !== true) {
          if (frame.depth === 0) this.stack.pop();
          else frame.depth -= 1;
        } else if (ch === '`' && frame.backtick === true) this.stack.pop();
        else this.substitution(ch, next);
        return;
    }
  }

  /** `$(` and backticks open a nested command, itself unquoted. */
  private substitution(ch: string | undefined, next: string | undefined): void {
    if (ch === '$' && next === '(') {
      this.at += 1;
      this.stack.push({ context: 'plain', depth: 0 });
    } else if (ch === '`') this.stack.push({ context: 'plain', depth: 0, backtick: true });
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
    const value = resolve(head, path, offset);
    const context = scanner.contextAt(offset);
    // The reference's own characters change no quoting.
    scanner.skipTo(offset + head.length + 2);
    if (value === undefined) return undefined;
    const name = bind(value);
    if (context === 'single') return `'"\${${name}}"'`;
    if (context === 'ansi') return `'"\${${name}}"$'`;
    return `\${${name}}`;
  });
}
