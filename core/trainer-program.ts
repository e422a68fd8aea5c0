// Which program a spec's `trainer.command` runs, before its entry point: `builtin` is the TypeScript char-level
// model, `hf` the Hugging Face trainer run with the hf-venv's interpreter (under FLYWHEEL_HOME, or
// FLYWHEEL_HF_PYTHON), anything else the argv as written. Pure: the trainers' places in the checkout are given here
// relative to it; backends/trainer-programs.ts makes them this host's paths and reads the environment.
import path from 'node:path';

/** Flywheel's own trainers, relative to the checkout. */
export const BUILTIN_TRAINER_PATH = 'trainers/charlm/main.ts';
export const HF_TRAINER_PATH = 'trainers/hf/main.py';
export const TORCH_TRAINER_PATH = 'trainers/torch/main.py';
/** The checkout's folders the Hugging Face trainer imports: its own, the PyTorch trainer's shared modules, formats/hf. */
export const HF_TRAINER_CODE_PATHS = ['trainers/hf', 'trainers/torch', 'formats/hf'];
/** Overrides the hf-venv's interpreter (a GPU host's own environment with vLLM, say). */
export const HF_PYTHON_ENV = 'FLYWHEEL_HF_PYTHON';
/** What makes the hf-venv's interpreter exist, said wherever its absence stops a trainer. */
export const HF_SETUP_HINT = `run flywheel setup hf (or set ${HF_PYTHON_ENV})`;

export type TrainerCommandSpec = 'builtin' | 'hf' | string[];

/**
 * `model: flywheel-base` in an hf spec: the small causal LM `flywheel setup hf` pretrains here (trainers/hf/pretrain_base.py),
 * cached under FLYWHEEL_HOME/models. The worker gives the hf trainer its folder in this variable, bound read-only.
 */
export const HF_BASE_MODEL_ALIAS = 'flywheel-base';
export const HF_BASE_MODEL_ENV = 'FLYWHEEL_BASE_MODEL';

/** Where pretrained base models are cached: `<home>/models/flywheel-base-<key>/`, and `flywheel-base.json` naming the current one. */
export function hfModelsDir(home: string): string {
  return path.join(home, 'models');
}

export function hfEnvDir(home: string): string {
  return path.join(home, 'hf-venv');
}

/** The folder an interpreter belongs to (`<venv>/bin/python3` → `<venv>`): bound back into a sandbox that masks it. */
export function interpreterHome(python: string): string {
  return path.dirname(path.dirname(python));
}

/**
 * Whether Flywheel scores the loss (bits_per_byte) of the checkpoints this trainer writes: `builtin` (charlm-v1) and
 * `hf` (hf-causal-lm-v1) yes, the reference PyTorch trainer (an argument naming a checkout's trainers/torch/main.py)
 * no; a trainer of one's own is `unknown` until its manifest names a format (it may write charlm-v1).
 */
export function lossScoredFor(command: TrainerCommandSpec): 'yes' | 'no' | 'unknown' {
  if (command === 'builtin' || command === 'hf') return 'yes';
  return command.some((a) => isTorchTrainer(a)) ? 'no' : 'unknown';
}

function isTorchTrainer(arg: string): boolean {
  const p = path.normalize(arg);
  return p === TORCH_TRAINER_PATH || p.endsWith(`/${TORCH_TRAINER_PATH}`);
}

/**
 * Whether the trainer's `predict` speaks `predict --serve` (core/job-contract.ts PredictRequest): `trainer.warmPredict`
 * as the spec says, else yes for Flywheel's own trainers (`builtin`, `hf`) and no for a command of one's own.
 */
export function warmPredictOf(trainer: { command: TrainerCommandSpec; warmPredict?: boolean }): boolean {
  return trainer.warmPredict ?? (trainer.command === 'builtin' || trainer.command === 'hf');
}
