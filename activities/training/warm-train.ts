// Whether a run goes to a warm trainer (`trainer.warmTrain`: backends/local/train-servers.ts), and how its server is
// started: in the sandbox a one-shot run gets, with the run's dataset and warm start read-only, and the server's own
// folder read-write instead of a run directory. Runs may share a server only where that sandbox and program are the
// same: the campaign, its trainer block, what the worker hides and the data bound in make the key. The gate's seed
// reruns and a patch experiment's runs always start a fresh process: a trainer that keeps state between runs must
// not make a rerun that confirms or measures noise depend on what ran before it.
import type { RunJson } from '../../core/job-contract';
import type { CampaignSpec } from '../../core/spec';
import { SEED_RERUN_PROPOSER } from '../../core/gate/noise-check';
import type { ServeRequest } from '../../backends/local/train-servers';
import { warmTrainRoot } from '../../services/paths';
import { isolatedEntry, trainerSetupOf } from './trainer-isolation';

/** The served launch of this run, or undefined when it runs a process of its own. */
export function serveRequestOf(
  spec: CampaignSpec,
  home: string,
  exp: { campaignId: string; proposer: string; recipeCommit: string | null },
  run: RunJson,
): ServeRequest | undefined {
  if (!spec.trainer.warmTrain || spec.backend.kind !== 'local') return undefined;
  if (exp.proposer === SEED_RERUN_PROPOSER || exp.recipeCommit) return undefined;
  const setup = trainerSetupOf(spec, home);
  const data = [run.dataset.path, ...(run.baseCheckpoint ? [run.baseCheckpoint] : [])];
  return {
    key: JSON.stringify([exp.campaignId, setup.trainer, setup.hide, setup.recipeDir ?? null, data]),
    root: warmTrainRoot(home),
    command: (serverDir) => isolatedEntry(setup, 'train', ['--serve'], { cwd: serverDir, data, readWrite: [serverDir] }),
  };
}
