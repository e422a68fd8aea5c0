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

/** Busy ticks of the whole machine so far (user, nice, system, irq, softirq, steal), from /proc/stat. */
export function machineTicks(): number {
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return f[0] + f[1] + f[2] + f[5] + f[6] + f[7];
}
