// The local backend's watcher: what a run uses that no kernel limit of one process can see. Resident memory summed
// over all its processes, its processes and threads, the bytes and files it left in its run directory, and its two
// captured logs. The local backend asks on each status() (awaitTraining polls every 25 ms to 1 s), and the watcher
// looks at most once a second per run and never in a run's first second, so a short run costs no /proc scan at all.
import { STARTED_AT_FILE, STDERR_LOG, STDOUT_LOG } from '../../core/contract-files';
import fs from 'node:fs';
import path from 'node:path';
import { mib, type LimitBreach, type ResourceLimits } from '../../core/resource-limits';
import { formatBytes } from '../../core/format-bytes';
import { readTrimmed } from '../run-dir-files';
import { isServerOf, readServed } from './served-record';

/** A run is first looked at once it is this old: most no-op runs are over before. */
export const FIRST_LOOK_MS = 1000;
/** The least time between two looks at one run's processes and logs. */
export const LOOK_EVERY_MS = 1000;
/** A walk of the run directory takes at most this share of the time between walks (a run of 50,000 files is walked less often). */
const WALK_DUTY = 0.02;

/** One process as /proc/<pid>/stat tells it. */
export interface Proc {
  pid: number;
  ppid: number;
  pgid: number;
  threads: number;
  rssPages: number;
  /** When it started, in clock ticks since boot: with the pid, names this process and no later one. */
  start: number;
}

interface ProcessTable {
  at: number;
  byPid: Map<number, Proc>;
  children: Map<number, number[]>;
}

let table: ProcessTable | undefined;

/**
 * Every live process on the host, read once for all runs the worker watches: one pass over /proc a second, however
 * many runs there are (a pass per run would cost 200 passes a second at 200 runs).
 */
function processTable(now: number, maxAgeMs: number): ProcessTable {
  if (table && now - table.at < maxAgeMs) return table;
  const byPid = new Map<number, Proc>();
  const children = new Map<number, number[]>();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    // The name (field 2) may hold spaces and parentheses: the fields after it start after its last ')'.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (f[0] === 'Z' || f[0] === 'X') continue;
    const p: Proc = {
      pid: Number(name),
      ppid: Number(f[1]),
      pgid: Number(f[2]),
      threads: Number(f[17]),
      rssPages: Number(f[21]),
      start: Number(f[19]),
    };
    byPid.set(p.pid, p);
    const siblings = children.get(p.ppid);
    if (siblings) siblings.push(p.pid);
    else children.set(p.ppid, [p.pid]);
  }
  table = { at: now, byPid, children };
  return table;
}

/**
 * The run's processes: everything in the launcher's process group (the kernel hands out no pid that is still a group's
 * id, so these are the run's even after the launcher died), and, while `launcherPid` is still the run's launcher,
 * everything descended from it: a trainer that calls setsid is still a child, and in the sandbox an orphan is
 * reparented to the sandbox's own init, itself a descendant.
 */
export function runProcesses(launcherPid: number, opts: { descendants: boolean; now?: number; maxAgeMs?: number }): Proc[] {
  const t = processTable(opts.now ?? Date.now(), opts.maxAgeMs ?? 0);
  const seen = new Set<number>();
  const stack = opts.descendants ? [launcherPid] : [];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    if (seen.has(pid) || !t.byPid.has(pid)) continue;
    seen.add(pid);
    stack.push(...(t.children.get(pid) ?? []));
  }
  for (const p of t.byPid.values()) if (p.pgid === launcherPid) seen.add(p.pid);
  return [...seen].map((pid) => t.byPid.get(pid)!);
}

/** Whether `p` is still the process it was when listed (same pid, same start): a pid is reused once its process is reaped. */
export function stillRunning(p: Proc): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${p.pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(f[19]) === p.start && f[0] !== 'Z' && f[0] !== 'X';
  } catch {
    return false;
  }
}

/**
 * Whether `pid` is the local launcher of the run whose launch directory is `launchDir` (its argv names it), or, for a
 * run a warm trainer serves, that server (served-record.ts).
 */
export function isLauncherOf(pid: number, launchDir: string): boolean {
  const served = readServed(launchDir);
  if (served) return isServerOf(pid, served);
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(`\0flywheel-launch\0${launchDir}\0`);
  } catch {
    return false;
  }
}

let pageBytes: number | undefined;
/** The kernel's page size (the unit of stat's rss), found once from this process's own statm and status. */
function pageSize(): number {
  if (pageBytes !== undefined) return pageBytes;
  pageBytes = 4096;
  try {
    const pages = Number(fs.readFileSync('/proc/self/statm', 'utf8').split(' ')[1]);
    const kb = Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))?.[1]);
    if (pages > 0 && kb > 0) pageBytes = 2 ** Math.round(Math.log2((kb * 1024) / pages));
  } catch {
    /* no /proc: the common size */
  }
  return pageBytes;
}

/** Bytes and files under a folder, by lstat (a link is counted, never followed), stopping past either cap. */
export function folderUsage(dir: string, maxFiles: number, maxBytes: number): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  const stack = [dir];
  while (stack.length > 0 && files <= maxFiles && bytes <= maxBytes) {
    const at = stack.pop()!;
    let names: string[];
    try {
      names = fs.readdirSync(at);
    } catch {
      continue; // removed meanwhile, or not a folder any more
    }
    for (const name of names) {
      const p = path.join(at, name);
      let st: fs.Stats;
      try {
        st = fs.lstatSync(p);
      } catch {
        continue;
      }
      files++;
      // A sparse file counts at its length: that is what a reader of it (a checkpoint's hash) goes through.
      bytes += Math.max(st.size, st.blocks * 512);
      if (st.isDirectory()) stack.push(p);
      if (files > maxFiles || bytes > maxBytes) break;
    }
  }
  return { files, bytes };
}

/** The run directory's disk or file limit, if `dir` is past one. */
export function folderBreach(dir: string, limits: ResourceLimits): LimitBreach | undefined {
  const used = folderUsage(dir, limits.files, mib(limits.diskMb));
  if (used.files > limits.files) return { limit: 'files', detail: `more than ${limits.files} files and folders in the run directory` };
  if (used.bytes > mib(limits.diskMb))
    return { limit: 'disk', detail: `more than ${formatBytes(mib(limits.diskMb))} in the run directory` };
  return undefined;
}

/** The bytes each captured log holds (0 when missing). */
export function logBytes(launchDir: string): { stdout: number; stderr: number } {
  const size = (name: string) => {
    try {
      return fs.lstatSync(path.join(launchDir, name)).size;
    } catch {
      return 0;
    }
  };
  return { stdout: size(STDOUT_LOG), stderr: size(STDERR_LOG) };
}

/** A log past its cap, if one is: the launcher keeps one byte more than the cap, so a full log means a write past it. */
export function logBreach(launchDir: string, limits: ResourceLimits): LimitBreach | undefined {
  const cap = mib(limits.logMb);
  const sizes = logBytes(launchDir);
  for (const name of ['stdout', 'stderr'] as const)
    if (sizes[name] > cap) return { limit: 'log', detail: `${name} passed ${formatBytes(cap)}` };
  return undefined;
}

interface Watched {
  startedAt: number;
  nextLook: number;
  nextWalk: number;
}

/** Looks at runs as the local backend's status() asks, each at most once a second; forget() a run once it ends. */
export class RunWatcher {
  private readonly runs = new Map<string, Watched>();

  /** The first limit the run is past, or undefined (also when it is not yet time to look). */
  check(launchDir: string, runDir: string, launcherPid: number, limits: ResourceLimits, now = Date.now()): LimitBreach | undefined {
    let w = this.runs.get(launchDir);
    if (!w) {
      const started = Number(readTrimmed(path.join(launchDir, STARTED_AT_FILE))) * 1000;
      const startedAt = Number.isFinite(started) && started > 0 ? started : now;
      w = { startedAt, nextLook: startedAt + FIRST_LOOK_MS, nextWalk: startedAt + FIRST_LOOK_MS };
      this.runs.set(launchDir, w);
    }
    if (now < w.nextLook) return undefined;
    w.nextLook = now + LOOK_EVERY_MS;

    const logs = logBreach(launchDir, limits);
    if (logs) return logs;
    // One table for every run looked at within the same second.
    const procs = runProcesses(launcherPid, { descendants: isLauncherOf(launcherPid, launchDir), now, maxAgeMs: LOOK_EVERY_MS / 2 });
    const tasks = procs.reduce((n, p) => n + Math.max(1, p.threads), 0);
    if (tasks > limits.processes)
      return { limit: 'processes', detail: `${tasks} processes and threads (${procs.length} processes), limit ${limits.processes}` };
    const rss = procs.reduce((n, p) => n + p.rssPages, 0) * pageSize();
    if (rss > mib(limits.memoryMb))
      return {
        limit: 'memory',
        detail: `${formatBytes(rss)} resident over ${procs.length} processes, limit ${formatBytes(mib(limits.memoryMb))}`,
      };

    if (now >= w.nextWalk) {
      const began = Date.now();
      const breach = folderBreach(runDir, limits);
      w.nextWalk = now + Math.max(LOOK_EVERY_MS, (Date.now() - began) / WALK_DUTY);
      if (breach) return breach;
    }
    return undefined;
  }

  forget(launchDir: string): void {
    this.runs.delete(launchDir);
  }
}
