import { readdir, readFile } from 'node:fs/promises';

/**
 * Whether a process group still has a member that is not a zombie. A member killed along with
 * its shell is an orphan: its zombie waits for PID 1 to reap it, and some hosts' PID 1 (a
 * container's supervisor, node itself without an init) reaps late or never. A zombie runs
 * nothing and holds no pipe open, so it does not keep a step going; on Linux the group's
 * members are read from /proc, elsewhere any member counts.
 */
export async function groupHasLiveMember(pgid: number): Promise<boolean> {
  try {
    process.kill(-pgid, 0);
  } catch {
    return false;
  }
  if (process.platform !== 'linux') return true;
  const names = await readdir('/proc').catch(() => undefined);
  if (names === undefined) return true;
  const states = await Promise.all(names.filter(isPid).map((name) => stateInGroup(name, pgid)));
  return states.some((state) => state !== undefined && state !== 'Z' && state !== 'X');
}

const isPid = (name: string): boolean => name.charCodeAt(0) >= 48 && name.charCodeAt(0) <= 57;

/**
 * The one-letter state of process `pid` when it belongs to group `pgid`. A process that exited
 * meanwhile is in no group; one whose stat cannot be read for another reason might be in this
 * one, so it counts as live (`?`): waiting a little longer beats ending a step that still runs.
 */
async function stateInGroup(pid: string, pgid: number): Promise<string | undefined> {
  let stat: string;
  try {
    stat = await readFile(`/proc/${pid}/stat`, 'latin1');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ESRCH' ? undefined : '?';
  }
  // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so fields count from the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ', 3);
  return Number(fields[2]) === pgid ? fields[0] : undefined;
}
