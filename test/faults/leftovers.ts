// What a fault run can hit and what it must not leave behind: the trainer processes of this run's home, and its
// Slurm jobs (one per training attempt, none still queued or running once the loop has ended).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { jobNameOf } from '../../backends/slurm/slurm-backend';
import { jobsNamed } from '../../backends/slurm/slurm-commands';
import { commandLine } from '../../infra/dev-stack/processes';

/** Trainer processes (`… train --run-dir HOME/…`, any trainer, local or under slurmstepd) of the run in `home`. */
export function trainerPids(home: string): number[] {
  return fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .filter((pid) => {
      const cmd = commandLine(pid) ?? '';
      return cmd.includes(' train --run-dir ') && cmd.includes(home);
    });
}

/** Slurm jobs of the run in `home` still pending, running or completing. */
export async function activeSlurmJobs(home: string): Promise<string[]> {
  const { stdout } = await promisify(execFile)('squeue', ['--noheader', '--states=PENDING,RUNNING,CONFIGURING,COMPLETING,SUSPENDED,REQUEUED', '--format=%i\t%T\t%Z']);
  return stdout.split('\n').filter((l) => l.trim() && l.includes(home));
}

/** Violations of "one Slurm job per training attempt": each training_runs row has exactly one job in its run directory. */
export async function slurmJobViolations(runs: { id: string; runDir: string }[]): Promise<string[]> {
  const out: string[] = [];
  for (const { id, runDir } of runs) {
    // Another run of the same campaign id (the fault-free one) shares the job names, not the directories.
    const jobs = (await jobsNamed(jobNameOf(id))).filter((j) => path.resolve(j.workDir) === path.resolve(runDir));
    if (jobs.length !== 1) out.push(`run ${id}: ${jobs.length} Slurm jobs named ${jobNameOf(id)} (${jobs.map((j) => `${j.jobId} ${j.state}`).join(', ') || 'none'}), expected 1`);
  }
  return out;
}
