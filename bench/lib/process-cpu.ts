// A process's CPU so far (user + system), read from /proc/PID/stat: what the CPU benches subtract before and after.
import fs from 'node:fs';

/** The kernel's clock tick, in ms (USER_HZ is 100 on Linux). */
export const TICK_MS = 1000 / 100;

/** utime + stime of a process, in ticks. */
export function ticksOf(pid: number | 'self'): number {
  const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]);
}
