// Thin wrappers over Slurm's client commands (sbatch, squeue, scontrol, scancel), run with execFile: argv is data,
// never a shell string. Each failure is one SlurmCommandError line naming the command and Slurm's own message.
import { execFile } from 'node:child_process';
import { FlywheelError } from '../../core/errors';

export class SlurmCommandError extends FlywheelError {
  constructor(
    readonly command: string,
    message: string,
    readonly stderr = '',
  ) {
    super(`${command}: ${message}`);
  }
}

/** What `scontrol show job` says about one job (the fields the backend reads). */
export interface SlurmJobInfo {
  jobId: string;
  jobName: string;
  /** e.g. RUNNING, COMPLETED, TIMEOUT; a `+` suffix (CANCELLED+) is dropped. */
  state: string;
  /** The batch script's exit status (`ExitCode=3:0` gives 3). */
  exitCode: number;
  /** The signal that ended it (`ExitCode=0:15` gives 15), 0 if none. */
  signal: number;
  /** Times Slurm requeued it. */
  restarts: number;
  reason: string;
  workDir: string;
}

export interface SlurmQueueEntry {
  jobId: string;
  state: string;
  workDir: string;
}

export interface SlurmCommandOptions {
  /** Per-command limit, so a hung slurmctld fails the activity instead of blocking it. @default 30000 */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;

function run(command: string, args: string[], opts: SlurmCommandOptions & { env?: NodeJS.ProcessEnv } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      command,
      args,
      { timeout: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS, env: opts.env ?? process.env, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (!err) return resolve(stdout);
        const e = err as NodeJS.ErrnoException & { killed?: boolean; code?: string | number };
        if (e.code === 'ENOENT') {
          return reject(
            new SlurmCommandError(
              command,
              `not found on PATH: Slurm's client commands are not installed here (a test machine: run .ci/start-slurm.sh)`,
            ),
          );
        }
        if (e.killed) return reject(new SlurmCommandError(command, `no answer within ${opts.timeoutMs ?? DEFAULT_TIMEOUT_MS} ms`, stderr));
        const msg = oneLine(stderr) || oneLine(stdout) || `exit code ${String(e.code)}`;
        reject(new SlurmCommandError(command, msg, stderr));
      },
    );
  });
}

function oneLine(s: string): string {
  return s
    .trim()
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .join('; ');
}

/** Submits `script` with `args` after it (Slurm hands them to the script as "$@"); returns the job id. */
export async function sbatch(
  options: string[],
  script: string,
  args: string[],
  opts: SlurmCommandOptions & { env?: NodeJS.ProcessEnv } = {},
): Promise<string> {
  const out = (await run('sbatch', ['--parsable', ...options, script, ...args], opts)).trim();
  // --parsable prints "jobid" or "jobid;cluster".
  const id = out.split(';')[0];
  if (!/^\d+$/.test(id)) throw new SlurmCommandError('sbatch', `unexpected output "${out}" (wanted a job id)`);
  return id;
}

/** Jobs Slurm still knows (any state, finished ones until MinJobAge) named `name`. */
export function jobsNamed(name: string, opts: SlurmCommandOptions = {}): Promise<SlurmQueueEntry[]> {
  return squeue(['--states=all', `--name=${name}`], opts);
}

/** Jobs in any of `states` (e.g. PENDING,RUNNING), whatever their name. */
export function jobsInStates(states: string[], opts: SlurmCommandOptions = {}): Promise<SlurmQueueEntry[]> {
  return squeue([`--states=${states.join(',')}`], opts);
}

async function squeue(filters: string[], opts: SlurmCommandOptions): Promise<SlurmQueueEntry[]> {
  const out = await run('squeue', ['--noheader', ...filters, '--format=%i\t%T\t%Z'], opts);
  return out
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const [jobId, state, ...dir] = l.split('\t');
      return { jobId: jobId.trim(), state: state.trim(), workDir: dir.join('\t') };
    });
}

/** `scontrol show job ID`, or undefined when Slurm no longer knows the job (purged after MinJobAge, or never). */
export async function showJob(jobId: string, opts: SlurmCommandOptions = {}): Promise<SlurmJobInfo | undefined> {
  let out: string;
  try {
    out = await run('scontrol', ['show', 'job', jobId], opts);
  } catch (e) {
    if (e instanceof SlurmCommandError && /Invalid job id/i.test(e.message)) return undefined;
    throw e;
  }
  return parseShowJob(out);
}

// Fields whose values may hold spaces (paths, the command) sit alone on their line; the rest are `Key=Value` tokens.
const WHOLE_LINE_FIELDS = new Set(['WorkDir', 'StdErr', 'StdOut', 'StdIn', 'Command', 'Comment']);

export function parseShowJob(text: string): SlurmJobInfo {
  const f = new Map<string, string>();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    const eq = line.indexOf('=');
    const key = line.slice(0, eq);
    if (eq > 0 && WHOLE_LINE_FIELDS.has(key)) {
      f.set(key, line.slice(eq + 1));
      continue;
    }
    for (const tok of line.split(/\s+/)) {
      const i = tok.indexOf('=');
      if (i > 0 && !f.has(tok.slice(0, i))) f.set(tok.slice(0, i), tok.slice(i + 1));
    }
  }
  const jobId = f.get('JobId');
  const state = f.get('JobState');
  if (!jobId || !state) throw new SlurmCommandError('scontrol show job', `unexpected output "${oneLine(text).slice(0, 200)}"`);
  const [code, signal] = (f.get('ExitCode') ?? '0:0').split(':').map(Number);
  return {
    jobId,
    jobName: f.get('JobName') ?? '',
    state: state.replace(/\+$/, ''),
    exitCode: Number.isFinite(code) ? code : 0,
    signal: Number.isFinite(signal) ? signal : 0,
    restarts: Number(f.get('Restarts') ?? 0),
    reason: f.get('Reason') ?? '',
    workDir: f.get('WorkDir') ?? '',
  };
}

/** Puts a batch job back in the queue (it runs again from its script, in the same run directory). */
export async function requeue(jobId: string, opts: SlurmCommandOptions = {}): Promise<void> {
  await run('scontrol', ['requeue', jobId], opts);
}

/** Cancels the job, batch step included (`--full`: the script and everything it started). */
export async function scancel(jobId: string, opts: SlurmCommandOptions = {}): Promise<void> {
  await run('scancel', ['--full', jobId], opts);
}

/** Whether slurmctld answers; the message says why not. */
export async function controllerUp(opts: SlurmCommandOptions = {}): Promise<{ up: boolean; message: string }> {
  try {
    const out = await run('scontrol', ['ping'], opts);
    // A down controller's reply is one line, then a banner of asterisks.
    return { up: /\bUP\b/.test(out), message: out.trim().split('\n')[0] };
  } catch (e) {
    return { up: false, message: (e as Error).message };
  }
}
