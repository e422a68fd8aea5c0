// How a campaign's trainer is run, isolated, by the workers: the spec's trainer block plus what this worker hides from
// it (FLYWHEEL_HOME, the eval activity's predict scratch, the task's eval sources), and the isolated command of an
// entry point. The launch activity and the eval activity both go through here, so `train` and `predict` get the same
// sandbox; the request itself is backends/sandbox/trainer-request.ts's.
import path from 'node:path';
import { isolate, type IsolatedCommand, type IsolationRequest } from '../../backends/sandbox/sandbox';
import { isolationRequest as baseRequest, type EntryPaths, type TrainerSetup as BaseSetup } from '../../backends/sandbox/trainer-request';
import type { CampaignSpec } from '../../core/spec';
import { predictScratchRoot } from '../../services/paths';
import { hiddenTaskSources } from '../../services/task-registry';
import { REPO, type TrainerEntry } from '../../backends/trainer-programs';
import { recipeDirOf, withRecipeRequest } from './recipe-entry';

export type { EntryPaths };

/**
 * The spec's trainer block plus what the worker hides from it, and, for a recipe campaign, the read-only folder of the
 * commit the run uses (`{recipe}` in the command: recipe-entry.ts).
 */
export type TrainerSetup = BaseSetup & { recipeDir?: string };

/** What isolating one entry point asks of the sandbox (backends/sandbox/trainer-request.ts), with the recipe's folder. */
export function isolationRequest(setup: TrainerSetup, entry: TrainerEntry, args: string[], paths: EntryPaths): IsolationRequest {
  return withRecipeRequest(baseRequest(setup, entry, args, paths), setup.recipeDir);
}

/**
 * The campaign's trainer setup. With a recipe (`trainer.recipe`), `commit` (an experiment's own, else the version's
 * pinned `trainer.recipe.commit`) is materialized read-only and named by `{recipe}` in the command.
 */
export function trainerSetupOf(
  spec: Pick<CampaignSpec, 'trainer' | 'task'> & Partial<Pick<CampaignSpec, 'name'>>,
  home: string,
  commit?: string | null,
): TrainerSetup {
  const sources = hiddenTaskSources(spec.task, REPO);
  const setup: TrainerSetup = { trainer: spec.trainer, hide: [path.resolve(home), predictScratchRoot(), ...sources], home };
  const recipeDir = recipeDirOf(spec, home, commit);
  return recipeDir ? { ...setup, recipeDir } : setup;
}

/** The command that runs one entry point of the trainer under the campaign's isolation. */
export function isolatedEntry(setup: TrainerSetup, entry: 'train' | 'predict', args: string[], paths: EntryPaths): IsolatedCommand {
  return isolate(isolationRequest(setup, entry, args, paths));
}
