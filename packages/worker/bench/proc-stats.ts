// What the benches read of their processes from /proc (Linux): memory, CPU and children.
import { readFileSync } from 'node:fs';

/** The kernel's USER_HZ, the unit of the CPU times in /proc/<pid>/stat: 100 on every Linux architecture Node runs on. */
const CLOCK_TICKS_PER_SEC = 100;

/** VmRSS of a live process, in bytes (0 once it is gone). */
export function rss(pid: number): number {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return Number(kb ?? 0) * 1024;
  } catch {
    return 0;
  }
}

/** CPU time (user + system) a live process has used, in ms; undefined once it is gone. */
export function cpuMs(pid: number): number | undefined {
  try {
    // The fields after the command name, which may itself hold ") ": utime and stime are the 12th and 13th.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ').pop()?.split(' ') ?? [];
    const ms = ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SEC;
    return Number.isFinite(ms) ? ms : undefined;
  } catch {
    return undefined;
  }
}

/** Direct children's pids: a worker's or coordinator's spawner process is its only long-lived child. */
export function children(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}
