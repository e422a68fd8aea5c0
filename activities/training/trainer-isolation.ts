// How a campaign's trainer is run, isolated, by the workers: the spec's trainer block plus what this worker hides from
// it (FLYWHEEL_HOME, the eval activity's predict scratch, the task's eval sources), and the isolated command of an
// entry point. The launch activity and the eval activity both go through here, so `train` and `predict` get the same
// sandbox; the request itself is backends/sandbox/trainer-request.ts's.
import path from 'node:path';
import { isolate, type IsolatedCommand } from '../../backends/sandbox/sandbox';
import { isolationRequest, type EntryPaths, type TrainerSetup } from '../../backends/sandbox/trainer-request';
import type { CampaignSpec } from '../../core/spec';
import { predictScratchRoot } from '../../services/paths';
import { hiddenTaskSources } from '../../services/task-registry';
import { REPO } from '../../backends/trainer-programs';

export { isolationRequest, type EntryPaths, type TrainerSetup };

export function trainerSetupOf(spec: Pick<CampaignSpec, 'trainer' | 'task'>, home: string): TrainerSetup {
  const sources = hiddenTaskSources(spec.task, REPO);
  return { trainer: spec.trainer, hide: [path.resolve(home), predictScratchRoot(), ...sources], home };
}

/** The command that runs one entry point of the trainer under the campaign's isolation. */
export function isolatedEntry(setup: TrainerSetup, entry: 'train' | 'predict', args: string[], paths: EntryPaths): IsolatedCommand {
  return isolate(isolationRequest(setup, entry, args, paths));
}
