// What a fault run can hit and what it must not leave behind: the trainer processes of this run's home, and its
// Slurm jobs (one per training attempt, none still queued or running once the loop has ended).
import path from 'node:path';
import { jobNameOf } from '../../backends/slurm/slurm-backend';
import { jobsInStates, jobsNamed } from '../../backends/slurm/slurm-commands';
import { processesMentioning } from '../stack/up-process';

/**
 * Trainer processes (`… train --run-dir HOME/…`, any trainer, local or under slurmstepd; a warm trainer's sandbox,
 * `… train --serve`, whose argv binds its folder under HOME) of the run in `home`.
 */
export function trainerPids(home: string): number[] {
  return processesMentioning(home)
    .filter((line) => line.includes(' train --run-dir ') || line.includes(' train --serve'))
    .map((line) => Number(line.split(':')[0]));
}

/** Slurm jobs of the run in `home` still pending, running or completing. */
export async function activeSlurmJobs(home: string): Promise<string[]> {
  const jobs = await jobsInStates(['PENDING', 'RUNNING', 'CONFIGURING', 'COMPLETING', 'SUSPENDED', 'REQUEUED']);
  return jobs.filter((j) => j.workDir.startsWith(home)).map((j) => `${j.jobId} ${j.state} ${j.workDir}`);
}

/** Violations of "one Slurm job per training attempt": each training_runs row has exactly one job in its run directory. */
export async function slurmJobViolations(runs: { id: string; runDir: string }[]): Promise<string[]> {
  const out: string[] = [];
  for (const { id, runDir } of runs) {
    // Another run of the same campaign id (the fault-free one) shares the job names, not the directories.
    const jobs = (await jobsNamed(jobNameOf(id))).filter((j) => path.resolve(j.workDir) === path.resolve(runDir));
    if (jobs.length !== 1)
      out.push(
        `run ${id}: ${jobs.length} Slurm jobs named ${jobNameOf(id)} (${jobs.map((j) => `${j.jobId} ${j.state}`).join(', ') || 'none'}), expected 1`,
      );
  }
  return out;
}
