// What running one entry point of a campaign's trainer asks of the sandbox: its argv, the environment the spec allows,
// the code it may read, the paths it is given and what is hidden from it. The launch and eval activities
// (activities/training/trainer-isolation.ts), the loop's trainer check and `flywheel validate` (asking `describe`)
// all build it here, so every entry point gets the same sandbox.
import path from 'node:path';
import type { IsolationRequest } from './sandbox';
import { resolveLimits, type ResourceLimits } from '../../core/resource-limits';
import type { CampaignSpec } from '../../core/spec';
import { trainerEnvironment } from '../../core/trainer-environment';
import { HF_TRAINER_CODE, REPO, hfBaseModelBinding, hfPython, trainerArgv, type TrainerEntry } from '../trainer-programs';
import { HF_SETUP_HINT, interpreterHome } from '../../core/trainer-program';

/** The spec's trainer block plus what the worker hides from it. */
export interface TrainerSetup {
  trainer: Pick<
    CampaignSpec['trainer'],
    'command' | 'env' | 'passEnv' | 'readOnlyPaths' | 'network' | 'unsandboxed' | 'warmPredict' | 'limits'
  >;
  /** FLYWHEEL_HOME, the eval activity's predict scratch and the task's eval sources. */
  hide: string[];
  /** FLYWHEEL_HOME: where `trainer.command: hf` finds its interpreter (the hf-venv). */
  home: string;
}

export interface EntryPaths {
  cwd: string;
  /** Read-only inputs: the dataset version and base checkpoint, or predict's checkpoint and prompts. */
  data: string[];
  /** The run directory, or predict's scratch folder. */
  readWrite: string[];
}

/** What isolating one entry point asks of the sandbox: the argv, environment and paths (checkTrainer asks it too). */
export function isolationRequest(setup: TrainerSetup, entry: TrainerEntry, args: string[], paths: EntryPaths): IsolationRequest {
  const { trainer } = setup;
  const builtin = trainer.command === 'builtin';
  const hf = trainer.command === 'hf';
  return {
    argv: trainerArgv(trainer.command, setup.home, entry, args),
    // `model: flywheel-base`: the base model `flywheel setup hf` built, named in FLYWHEEL_BASE_MODEL and bound below.
    env: { ...trainerEnvironment(process.env, trainer), ...(hf ? hfBaseModelBinding(setup.home).env : {}) },
    cwd: paths.cwd,
    // The checkout and its node_modules (a worktree links it from elsewhere) for the built-in trainer's TypeScript.
    // The HF trainer's own folders of the checkout, and nothing else of it.
    code: [...(builtin ? [REPO, path.join(REPO, 'node_modules')] : []), ...(hf ? HF_TRAINER_CODE : []), ...trainer.readOnlyPaths],
    data: paths.data,
    readWrite: paths.readWrite,
    hide: setup.hide,
    // The hf-venv lives under FLYWHEEL_HOME, which is masked: its folder alone is bound back, read-only, after the masks.
    unmasked: hf ? [interpreterHome(hfPython(setup.home)), ...hfBaseModelBinding(setup.home).unmasked] : [],
    ...(hf ? { programHint: HF_SETUP_HINT } : {}),
    // Only `train` may have a network: `predict` holds held-out prompts, and a network would carry them out.
    network: entry === 'train' && trainer.network,
    unsandboxed: trainer.unsandboxed,
    trusted: builtin,
    limits: kernelLimitsOf(resolveLimits(trainer.limits)),
    // One uid per run directory or predict scratch: each counts its own processes.
    uidKey: paths.cwd,
  };
}

/** The limits the kernel enforces inside the sandbox (the local backend watches the rest). */
function kernelLimitsOf(l: ResourceLimits): Partial<ResourceLimits> {
  return { memoryMb: l.memoryMb, processes: l.processes, openFiles: l.openFiles, diskMb: l.diskMb };
}
