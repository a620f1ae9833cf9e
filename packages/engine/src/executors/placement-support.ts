import { randomBytes } from 'node:crypto';
import { homedir } from 'node:os';
import type { Writable } from 'node:stream';
import { join } from 'node:path';
import type { z } from 'zod';

/** Helpers the executors that run a step somewhere else (ssh, docker) share. */

/** One line naming each problem of a config by its field. */
export function configIssues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.') || 'config'}: ${i.message}`).join('; ');
}

/** A flag after `${VAR}` expansion: a boolean, or the text "true"/"false". */
export function flagOf(value: boolean | string | undefined, field: string): boolean | undefined {
  if (value === undefined || typeof value === 'boolean') return value;
  if (value === 'true' || value === 'false') return value === 'true';
  throw new Error(`invalid config: ${field}: must be true or false, got "${value}"`);
}

/** `~/x` in the step's home directory (its HOME, else the worker's). */
export function homePath(path: string, env: Record<string, string>): string {
  return path === '~' || path.startsWith('~/') ? join(env.HOME ?? homedir(), path.slice(1)) : path;
}

/** One word for a POSIX shell, whatever it holds. */
export function posixQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** A marker no command output will hold by chance. */
export function pidMarker(): string {
  return `trellis-pid-${randomBytes(6).toString('hex')}:`;
}

/** Signal names as `kill` and ssh take them: without the SIG prefix. */
export const bareSignal = (signal: string): string => signal.replace(/^SIG/, '');

/**
 * Forwards a remote command's stderr, taking out the line `<marker><pid>` the command printed
 * first, so a stop can signal the process group that pid leads.
 */
export class PidLineFilter {
  private head = '';
  private found = false;
  private waiting: Array<(pid: number) => void> = [];
  pid: number | undefined;

  constructor(
    private readonly marker: string,
    private readonly out: Writable,
  ) {}

  /**
   * Calls `fn` with the pid once it is known. A stop can come before the pid line has crossed
   * the network: the signal must still reach the process when the line arrives.
   */
  whenPid(fn: (pid: number) => void): void {
    if (this.pid !== undefined) fn(this.pid);
    else if (!this.found) this.waiting.push(fn);
  }

  write(chunk: Buffer): void {
    if (this.found) return void this.out.write(chunk);
    this.head += chunk.toString('latin1');
    const start = this.head.indexOf(this.marker);
    const end = start < 0 ? -1 : this.head.indexOf('\n', start);
    if (end < 0 && this.head.length < 4096) return;
    this.found = true;
    if (end >= 0) this.pid = Number(this.head.slice(start + this.marker.length, end));
    const rest = end >= 0 ? this.head.slice(0, start) + this.head.slice(end + 1) : this.head;
    if (rest !== '') this.out.write(Buffer.from(rest, 'latin1'));
    this.release();
  }

  flush(): void {
    if (!this.found && this.head !== '') this.out.write(Buffer.from(this.head, 'latin1'));
    this.found = true;
    this.waiting = [];
  }

  private release(): void {
    const waiting = this.waiting;
    this.waiting = [];
    const pid = this.pid;
    if (pid !== undefined && Number.isInteger(pid) && pid > 1) for (const fn of waiting) fn(pid);
  }
}
