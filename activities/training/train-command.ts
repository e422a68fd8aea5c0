// The argv and environment of one training run, by backend: local processes and Slurm jobs run the trainer in the
// bubblewrap sandbox (backends/sandbox); Ray and Kubernetes jobs run in the cluster's own containers, so the
// trainer gets the environment allow-list there and the operator keeps eval data off the volumes it mounts.
import type { RunJson } from '../../core/job-contract';
import type { CampaignSpec } from '../../core/spec';
import { trainerEnvironment } from '../../core/trainer-environment';
import { SANDBOXED_BACKENDS } from '../../backends/sandbox/trainer-start';
import { trainerArgv } from './trainer-command';
import { recipeDirOf, withRecipe } from './recipe-entry';
import { isolatedEntry, trainerSetupOf } from './trainer-isolation';

/** In the run's launch directory (launchDirOf), where the trainer cannot rewrite it: how it was isolated (`{"sandbox": "bubblewrap"}`). */
export { ISOLATION_FILE } from '../../core/contract-files';

export interface TrainCommand {
  argv: string[];
  env: Record<string, string>;
  /** How the trainer is isolated: recorded in the launch directory (isolation.json) and shown in reports. */
  isolation: { sandbox: 'bubblewrap' | 'none' | 'cluster'; reason?: string };
}

/** `recipeCommit`: the experiment's own recipe commit (a patch experiment), else the version's pinned one is run. */
export function trainCommand(spec: CampaignSpec, home: string, run: RunJson, runDir: string, recipeCommit?: string | null): TrainCommand {
  const args = ['--run-dir', runDir];
  if (!SANDBOXED_BACKENDS.has(spec.backend.kind)) {
    const reason = `${spec.backend.kind} runs the trainer in the cluster's container, with the environment allow-list`;
    return {
      argv: withRecipe(trainerArgv(spec.trainer.command, home, 'train', args), recipeDirOf(spec, home, recipeCommit)),
      env: trainerEnvironment(process.env, spec.trainer),
      isolation: { sandbox: 'cluster', reason },
    };
  }
  const data = [run.dataset.path, ...(run.baseCheckpoint ? [run.baseCheckpoint] : [])];
  const { argv, env, sandbox, reason } = isolatedEntry(trainerSetupOf(spec, home, recipeCommit), 'train', args, {
    cwd: runDir,
    data,
    readWrite: [runDir],
  });
  return { argv, env, isolation: { sandbox, ...(reason ? { reason } : {}) } };
}
